/**
 * What every provider module that sends through an AWS SDK v3 client shares (the e-mail and the
 * SMS service of AWS): the client options that make one SDK call one attempt, and the classification
 * of failures that happen before any answer came back. A module classifies the service's own
 * answers (by error name) itself.
 */
import { NotReached, type ProviderOutcome, TIMEOUT_CODE } from '../domain/outcome.ts';

/**
 * Client options fit for sends the ledger accounts for.
 *
 * `maxAttempts: 1`: the SDK's standard retry would resend after a 500, a reset or a timeout, none
 * of which prove the service did not take the message, and the AWS send calls
 * have no idempotency token. Every resend must be a ledger decision.
 *
 * Timeouts: the connect phase gets half the budget and the whole request (connect included) gets
 * all of it, so a connection that never opens always surfaces as smithy's connection timeout
 * (provably not sent: retryable) before the request timeout (maybe sent: ambiguous) can fire.
 * `throwOnRequestTimeout` is required: without it smithy only logs a warning. `socketTimeout`
 * bounds a response that stalls after its headers.
 */
export function singleAttemptClientOptions(timeoutMs: number) {
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new RangeError('timeoutMs must be a positive number');
  }
  return {
    maxAttempts: 1,
    requestHandler: {
      connectionTimeout: Math.max(1, Math.floor(timeoutMs / 2)),
      requestTimeout: timeoutMs,
      throwOnRequestTimeout: true,
      socketTimeout: timeoutMs,
    },
  } as const;
}

/** The parts of an SDK error the classifiers read (never `message` text into a code). */
export interface SdkErrorShape {
  readonly name?: unknown;
  readonly message?: unknown;
  readonly code?: unknown;
  readonly syscall?: unknown;
  readonly $fault?: unknown;
  readonly $metadata?: { readonly httpStatusCode?: unknown };
}

/** The service answered (an HTTP status, or a modelled fault): the module classifies it. */
export function isServiceAnswer(e: SdkErrorShape): boolean {
  return typeof e.$metadata?.httpStatusCode === 'number' || e.$fault === 'client' || e.$fault === 'server';
}

/** `<prefix>_<ErrorName>`, or `<prefix>_http_<status>` when the name says nothing. */
export function sdkAnswerCode(prefix: string, name: string, status: number | undefined): string {
  const safeName = name.replace(/[^A-Za-z0-9_]/g, '').slice(0, 64);
  const meaningless =
    safeName === '' || safeName === 'Unknown' || safeName === 'Error' || safeName === 'SyntaxError';
  if (!meaningless) return `${prefix}_${safeName}`;
  return status === undefined ? `${prefix}_unclassified` : `${prefix}_http_${status}`;
}

/** Errors that can only happen before a byte of the request left: no connection, no name. */
const PRE_SEND_CODES: ReadonlyMap<string, string> = new Map([
  ['ECONNREFUSED', NotReached.connectionRefused],
  ['ENOTFOUND', NotReached.dnsFailure],
  ['EAI_AGAIN', NotReached.dnsFailure],
]);

/**
 * smithy's connection timeout (`connectionTimeout`). It carries no code, only this message;
 * if a future smithy rewords it, the error falls through to `timeout` (ambiguous), which
 * costs a reconciliation, never a duplicate.
 */
const CONNECT_TIMEOUT = /did not establish a connection/;

/**
 * A failure with no answer from the service. Only what proves nothing was sent (no connection,
 * no credentials) is retryable; a reset or a timeout on an open socket is ambiguous.
 */
export function classifySdkTransportFailure(e: SdkErrorShape, unclassified: string): ProviderOutcome {
  const name = typeof e.name === 'string' ? e.name : '';
  const message = typeof e.message === 'string' ? e.message : '';
  const code = typeof e.code === 'string' ? e.code : undefined;
  const syscall = typeof e.syscall === 'string' ? e.syscall : undefined;

  const preSend = code === undefined ? undefined : PRE_SEND_CODES.get(code);
  if (preSend !== undefined) return { kind: 'retryable', code: preSend, throttled: false };
  // EHOSTUNREACH, ETIMEDOUT… raised by connect(): the socket never opened.
  if (syscall === 'connect' || syscall === 'getaddrinfo') {
    return { kind: 'retryable', code: NotReached.connectFailed, throttled: false };
  }
  if (name === 'TimeoutError' && code === undefined && CONNECT_TIMEOUT.test(message)) {
    return { kind: 'retryable', code: NotReached.connectTimeout, throttled: false };
  }
  // Credentials are resolved before the request is signed, so nothing was sent.
  if (name === 'CredentialsProviderError')
    return { kind: 'retryable', code: NotReached.credentialsUnavailable, throttled: false };

  // smithy renames ECONNRESET/EPIPE to TimeoutError, so test the code before the name. The
  // request was (at least partly) written on an open socket: the service may have it.
  if (code === 'ECONNRESET' || code === 'EPIPE') return { kind: 'ambiguous', code: 'connection_reset' };
  if (name === 'TimeoutError' || name === 'AbortError' || code === 'ETIMEDOUT') {
    return { kind: 'ambiguous', code: TIMEOUT_CODE };
  }
  return { kind: 'ambiguous', code: unclassified };
}

/**
 * One SDK send whose answer names the message: `accepted` with its id; a failure as the module
 * classifies it; a 2xx without an id `ambiguous` (the service most likely holds the message, but
 * we cannot name it).
 */
export async function sendForMessageId(
  send: () => Promise<{ readonly MessageId?: string | undefined }>,
  classify: (error: unknown) => ProviderOutcome,
  missingIdCode: string,
): Promise<ProviderOutcome> {
  let messageId: string | undefined;
  try {
    messageId = (await send()).MessageId;
  } catch (error) {
    return classify(error);
  }
  if (!messageId) return { kind: 'ambiguous', code: missingIdCode };
  return { kind: 'accepted', receiptId: messageId };
}
