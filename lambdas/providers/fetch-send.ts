/**
 * What every provider module that sends with plain `fetch` shares (REST providers and
 * gateways): the classification of a thrown fetch error (only failures before the request was
 * written are retryable) and `Retry-After` parsing.
 */
import { NotReached, type ProviderOutcome, TIMEOUT_CODE } from '../domain/outcome.ts';

/** Connect-phase failures: no byte of the request reached the provider. */
const NOT_SENT_CODES: Readonly<Record<string, string>> = {
  ECONNREFUSED: NotReached.connectionRefused,
  ENOTFOUND: NotReached.dnsFailure,
  EAI_AGAIN: NotReached.dnsFailure,
  EHOSTUNREACH: NotReached.hostUnreachable,
  ENETUNREACH: NotReached.hostUnreachable,
  EADDRNOTAVAIL: NotReached.hostUnreachable,
  UND_ERR_CONNECT_TIMEOUT: NotReached.connectTimeout,
};

/** The connection broke with the request possibly written. */
const BROKEN_AFTER_SEND_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'ECONNABORTED',
]);

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_)/;

/**
 * Classifies a thrown fetch error. Only failures that provably happen before the request is
 * written (refused connection, DNS, TLS handshake) are retryable; everything else, including
 * errors we do not recognise, is ambiguous, because resending what the provider may hold is
 * the one mistake the ledger exists to prevent.
 */
export function outcomeForNetworkError(error: unknown): ProviderOutcome {
  const chain = errorChain(error);
  if (chain.some((e) => e.name === 'TimeoutError' || e.name === 'AbortError')) {
    return { kind: 'ambiguous', code: TIMEOUT_CODE };
  }
  const codes = chain.map((e) => e.code).filter((c): c is string => typeof c === 'string');
  if (
    codes.some((c) => BROKEN_AFTER_SEND_CODES.has(c)) ||
    chain.some((e) => /other side closed/i.test(e.message))
  ) {
    return { kind: 'ambiguous', code: 'connection_reset' };
  }
  for (const c of codes) {
    const notSent = NOT_SENT_CODES[c];
    if (notSent !== undefined) return { kind: 'retryable', code: notSent, throttled: false };
  }
  if (codes.some((c) => TLS_CODE.test(c)))
    return { kind: 'retryable', code: NotReached.tlsError, throttled: false };
  return { kind: 'ambiguous', code: 'network_error' };
}

interface ErrorLike {
  readonly name: string;
  readonly message: string;
  readonly code: unknown;
}

/** The error, its `cause`s and an AggregateError's members, bounded against cycles. */
function errorChain(error: unknown): ErrorLike[] {
  const out: ErrorLike[] = [];
  const queue: unknown[] = [error];
  while (queue.length > 0 && out.length < 16) {
    const current = queue.shift();
    if (typeof current !== 'object' || current === null) continue;
    const record = current as {
      name?: unknown;
      message?: unknown;
      code?: unknown;
      cause?: unknown;
      errors?: unknown;
    };
    out.push({
      name: typeof record.name === 'string' ? record.name : '',
      message: typeof record.message === 'string' ? record.message : '',
      code: record.code,
    });
    if (record.cause !== undefined) queue.push(record.cause);
    if (Array.isArray(record.errors)) queue.push(...record.errors.slice(0, 4));
  }
  return out;
}

/** `Retry-After` as delay-seconds or an HTTP-date (RFC 9110 §10.2.3); undefined if absent or garbled. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  if (!/[a-z]/i.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
