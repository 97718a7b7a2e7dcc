import {
  SESv2Client,
  type SESv2ClientConfig,
  SendEmailCommand,
  type SendEmailCommandInput,
} from '@aws-sdk/client-sesv2';
import type { ProviderOutcome } from '../../domain/outcome.ts';
import type { TransportFacet } from '../../ports/provider.port.ts';
import type { EmailMessage, EmailTransport } from '../../ports/transport.port.ts';
import {
  classifySdkTransportFailure,
  isServiceAnswer,
  type SdkErrorShape,
  sdkAnswerCode,
  sendForMessageId,
  singleAttemptClientOptions,
} from '../aws-sdk-send.ts';
import { setting } from '../settings.ts';
import { SES_INTENT_HEADER, SES_INTENT_TAG, sesTagValue } from './tags.ts';

export { SES_INTENT_HEADER, SES_INTENT_TAG, sesTagValue };

export interface SesEmailTransportOptions {
  /** Built with `createSesClient({ timeoutMs })` when absent; an injected one should be too. */
  readonly client?: SESv2Client | undefined;
  /** A verified identity (address or an address in a verified domain). */
  readonly fromAddress: string;
  /** Selects the event destinations (EventBridge) that report delivery, bounce, complaint. */
  readonly configurationSetName?: string | undefined;
  /** `PROVIDER_TIMEOUT_MS`: past it, after the request went out, the outcome is ambiguous. */
  readonly timeoutMs: number;
}

/** Where the SDK normally takes these from the environment; tests and tools may pin them. */
export type SesClientOverrides = Pick<SESv2ClientConfig, 'region' | 'endpoint' | 'credentials'>;

/**
 * An SES v2 client fit for sends the ledger accounts for: one SDK call is one attempt, with the
 * timeouts that tell "never connected" from "maybe sent" (../aws-sdk-send.ts). The endpoint comes
 * from `AWS_ENDPOINT_URL_SESV2` when set (read by the SDK itself).
 */
export function createSesClient(options: { readonly timeoutMs: number } & SesClientOverrides): SESv2Client {
  const { timeoutMs, ...overrides } = options;
  return new SESv2Client({ ...overrides, ...singleAttemptClientOptions(timeoutMs) });
}

export class SesEmailTransport implements EmailTransport {
  readonly provider = 'ses';
  private readonly client: SESv2Client;
  private readonly fromAddress: string;
  private readonly configurationSetName: string | undefined;
  private readonly timeoutMs: number;

  constructor(options: SesEmailTransportOptions) {
    this.client = options.client ?? createSesClient({ timeoutMs: options.timeoutMs });
    this.fromAddress = options.fromAddress;
    this.configurationSetName = options.configurationSetName;
    this.timeoutMs = options.timeoutMs;
  }

  async send(message: EmailMessage): Promise<ProviderOutcome> {
    const tag = sesTagValue(message.correlationId);
    // SES refuses an empty tag value; an empty correlation id is a caller bug, caught before
    // anything is sent so the row cannot end up ambiguous for nothing.
    if (tag === '') throw new TypeError('EmailMessage.correlationId must not be empty');

    const input: SendEmailCommandInput = {
      FromEmailAddress: this.fromAddress,
      Destination: { ToAddresses: [message.to] },
      Content: {
        Simple: {
          Subject: { Data: message.subject, Charset: 'UTF-8' },
          Body: {
            Text: { Data: message.text, Charset: 'UTF-8' },
            ...(message.html === undefined ? {} : { Html: { Data: message.html, Charset: 'UTF-8' } }),
          },
          // Also in a header: SES events carry `mail.headers`, so an event can be matched even
          // where tags are not published (and the local emulator, which drops tags, keeps it).
          Headers: [{ Name: SES_INTENT_HEADER, Value: tag }],
        },
      },
      EmailTags: [{ Name: SES_INTENT_TAG, Value: tag }],
      ...(this.configurationSetName === undefined ? {} : { ConfigurationSetName: this.configurationSetName }),
    };

    return sendForMessageId(
      // Per call as well, so an injected client keeps this transport's budget.
      () => this.client.send(new SendEmailCommand(input), { requestTimeout: this.timeoutMs }),
      classifySesError,
      'ses_missing_message_id',
    );
  }
}

/** The transport facet (lambdas/providers/ses/index.ts): the sender's email transport. */
export const facet: TransportFacet = {
  email: (context) =>
    new SesEmailTransport({
      client: context.awsClient(createSesClient({ timeoutMs: context.timeoutMs })),
      fromAddress: setting(context, 'SES_FROM_ADDRESS'),
      configurationSetName: context.settings.SES_CONFIGURATION_SET,
      timeoutMs: context.timeoutMs,
    }),
};

/**
 * "Daily message quota exceeded": the 24-hour quota is a rolling window, so capacity returns
 * gradually as sends from a day ago age out; SES gives no time. Fifteen minutes (the default
 * `RETRY_CAP_MS`) keeps the whole channel from probing an exhausted quota every few seconds,
 * while still using capacity freed within the hour. It is advice, so it wins over backoff and
 * a notice whose deadline falls earlier fails with `deadline_exceeded` and escalates, which is
 * what an exhausted quota needs.
 */
export const SES_DAILY_QUOTA_RETRY_AFTER_MS = 15 * 60_000;

const DAILY_QUOTA = /daily message quota exceeded/i;
const MAX_SEND_RATE = /maximum sending rate exceeded/i;

const THROTTLING_NAMES: ReadonlySet<string> = new Set([
  'TooManyRequestsException',
  // SES v1 wording, still used in SES documentation of quota errors.
  'ThrottlingException',
  'Throttling',
]);

/** The request or the account is wrong for this message; the same call cannot pass. */
const PERMANENT_REJECTIONS: ReadonlySet<string> = new Set([
  'SendingPausedException',
  'AccountSuspendedException',
  'MailFromDomainNotVerifiedException',
  'MessageRejected',
  'NotFoundException',
  'BadRequestException',
]);

/**
 * Answers after which SES may hold the message. A 500 is SES saying its own processing
 * failed, but nothing says the failure came before the message was queued, and SendEmail
 * has no idempotency token to make a resend safe. The reconciler looks for it instead.
 */
const AMBIGUOUS_SERVER_ERRORS: ReadonlySet<string> = new Set([
  'InternalFailure',
  'InternalServiceErrorException',
]);

/**
 * A 503 is the front door shedding load: the request was not taken, so a resend cannot
 * duplicate. Not `throttled`, because it is not advice about our rate.
 */
const UNAVAILABLE_NAMES: ReadonlySet<string> = new Set(['ServiceUnavailable', 'ServiceUnavailableException']);

/**
 * Maps whatever `SESv2Client.send(SendEmailCommand)` threw to an outcome. Pure and total.
 *
 * The one rule behind every choice: only an error that proves the request never reached SES,
 * or that SES did not take it, may become `retryable`; anything that leaves doubt is
 * `ambiguous`, which the reconciler resolves before any resend. Codes are built from error
 * names, HTTP statuses and Node error codes only, never from messages, which can quote
 * addresses.
 */
export function classifySesError(error: unknown): ProviderOutcome {
  if (typeof error !== 'object' || error === null) return { kind: 'ambiguous', code: 'ses_unclassified' };
  const e = error as SdkErrorShape;
  const name = typeof e.name === 'string' ? e.name : '';
  const message = typeof e.message === 'string' ? e.message : '';
  const status = typeof e.$metadata?.httpStatusCode === 'number' ? e.$metadata.httpStatusCode : undefined;
  if (isServiceAnswer(e)) return classifyAnswer(name, message, status);
  return classifySdkTransportFailure(e, 'ses_unclassified');
}

function classifyAnswer(name: string, message: string, status: number | undefined): ProviderOutcome {
  const code = sdkAnswerCode('ses', name, status);

  // By message first: SES words both quota errors the same way whatever exception carries them
  // (which one carries the daily quota is undocumented for v2).
  if (DAILY_QUOTA.test(message)) {
    return {
      kind: 'retryable',
      code: 'ses_daily_quota_exceeded',
      throttled: true,
      retryAfterMs: SES_DAILY_QUOTA_RETRY_AFTER_MS,
    };
  }
  // SES sends no Retry-After: retryAfterMs stays undefined and the dispatcher backs off.
  if (MAX_SEND_RATE.test(message))
    return { kind: 'retryable', code: 'ses_max_send_rate_exceeded', throttled: true };

  if (THROTTLING_NAMES.has(name)) return { kind: 'retryable', code, throttled: true };
  // Named for a resource count (templates, contact lists…), not a rate; the SDK would retry it
  // by name alone, but it can clear later, so non-permanent.
  if (name === 'LimitExceededException') return { kind: 'rejected', code, permanent: false };
  if (PERMANENT_REJECTIONS.has(name)) return { kind: 'rejected', code, permanent: true };
  if (AMBIGUOUS_SERVER_ERRORS.has(name)) return { kind: 'ambiguous', code };
  if (UNAVAILABLE_NAMES.has(name)) return { kind: 'retryable', code, throttled: false };

  // Unmodelled names (aws-ses-v2-local's errors all arrive as `Unknown`, IAM and signature
  // errors are not in the SES model): decide by HTTP status.
  if (status === undefined) return { kind: 'ambiguous', code };
  if (status === 429) return { kind: 'retryable', code, throttled: true };
  // The server gave up waiting for our request, so it did not act on it.
  if (status === 408) return { kind: 'retryable', code, throttled: false };
  // Credentials or IAM: our side is wrong, not this message; it passes once that is fixed.
  if (status === 401 || status === 403) return { kind: 'rejected', code, permanent: false };
  if (status >= 400 && status < 500) return { kind: 'rejected', code, permanent: true };
  if (status === 503) return { kind: 'retryable', code, throttled: false };
  // 500, and 502/504 where a gateway may have forwarded the request and lost the answer; also
  // a 2xx whose body could not be read, after which SES most likely holds the message.
  return { kind: 'ambiguous', code };
}
