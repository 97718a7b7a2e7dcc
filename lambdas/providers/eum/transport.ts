import {
  PinpointSMSVoiceV2Client,
  PutOptedOutNumberCommand,
  SendTextMessageCommand,
  type SendTextMessageCommandInput,
} from '@aws-sdk/client-pinpoint-sms-voice-v2';
import type { ProviderOutcome } from '../../domain/outcome.ts';
import type { AwsSdkClient, TransportFacet } from '../../ports/provider.port.ts';
import type { ProviderSuppressions, SmsMessage, SmsTransport } from '../../ports/transport.port.ts';
import {
  classifySdkTransportFailure,
  isServiceAnswer,
  type SdkErrorShape,
  sdkAnswerCode,
  sendForMessageId,
  singleAttemptClientOptions,
} from '../aws-sdk-send.ts';
import { setting } from '../settings.ts';
import { EUM_INTENT_CONTEXT_KEY } from './descriptor.ts';

/** SendTextMessage's TimeToLive bounds, in seconds (the service's default is the maximum, 72 h). */
export const TTL_MIN_SECONDS = 5;
export const TTL_MAX_SECONDS = 259_200;

/** How long a message may wait for delivery: never past the notice's deadline. */
export function timeToLiveSeconds(deadline: number | undefined, now: number): number {
  if (deadline === undefined) return TTL_MAX_SECONDS;
  const left = Math.floor((deadline - now) / 1000);
  return Math.min(TTL_MAX_SECONDS, Math.max(TTL_MIN_SECONDS, left));
}

export interface EumSmsTransportOptions {
  /** Built with one attempt per call when absent (../aws-sdk-send.ts). */
  readonly client?: PinpointSMSVoiceV2Client | undefined;
  readonly originationIdentity: string;
  readonly configurationSetName?: string | undefined;
  readonly optOutListName: string;
  /** `PROVIDER_TIMEOUT_MS`: past it, after the request went out, the outcome is ambiguous. */
  readonly timeoutMs: number;
  readonly now?: () => number;
  /** Hands each client it builds to the function (ProviderContext `awsClient`); default: as built. */
  readonly awsClient?: <C extends AwsSdkClient>(client: C) => C;
}

/** The opt-out reason the service raises synchronously for a number on the identity's list. */
export const OPTED_OUT_REASON = 'DESTINATION_PHONE_NUMBER_OPTED_OUT';

/**
 * One SendTextMessage per attempt: TRANSACTIONAL, the intent in `Context`, a TimeToLive no longer
 * than the time left to the deadline, the MessageId kept as the receipt. The phone number and
 * the body go to the service only; outcome codes are built from error names and reasons.
 */
export class EumSmsTransport implements SmsTransport {
  readonly provider = 'eum';
  readonly suppressions: ProviderSuppressions;
  readonly #client: PinpointSMSVoiceV2Client;
  readonly #options: EumSmsTransportOptions;
  readonly #now: () => number;
  #adminClient: PinpointSMSVoiceV2Client | undefined;

  constructor(options: EumSmsTransportOptions) {
    this.#options = options;
    const adopt = options.awsClient ?? ((client) => client);
    this.#client =
      options.client ?? adopt(new PinpointSMSVoiceV2Client(singleAttemptClientOptions(options.timeoutMs)));
    this.#now = options.now ?? Date.now;
    this.suppressions = {
      // Our operator's suppression, mirrored so the account's list and ours agree. An idempotent
      // call, so this client may retry (the send client may not).
      add: async (destination) => {
        this.#adminClient ??= options.client ?? adopt(new PinpointSMSVoiceV2Client({}));
        await this.#adminClient.send(
          new PutOptedOutNumberCommand({
            OptOutListName: options.optOutListName,
            OptedOutNumber: destination,
          }),
        );
      },
    };
  }

  async send(message: SmsMessage): Promise<ProviderOutcome> {
    const input: SendTextMessageCommandInput = {
      DestinationPhoneNumber: message.to,
      OriginationIdentity: this.#options.originationIdentity,
      MessageBody: message.body,
      MessageType: 'TRANSACTIONAL',
      Context: { [EUM_INTENT_CONTEXT_KEY]: message.correlationId },
      TimeToLive: timeToLiveSeconds(message.deadline, this.#now()),
      ...(this.#options.configurationSetName
        ? { ConfigurationSetName: this.#options.configurationSetName }
        : {}),
    };
    return sendForMessageId(
      () => this.#client.send(new SendTextMessageCommand(input), { requestTimeout: this.#options.timeoutMs }),
      classifyEumError,
      'eum_missing_message_id',
    );
  }
}

/** The transport facet: the SMS sender's transport. */
export const facet: TransportFacet = {
  sms: (context) =>
    new EumSmsTransport({
      originationIdentity: setting(context, 'EUM_ORIGINATION_IDENTITY'),
      configurationSetName: context.settings.EUM_CONFIGURATION_SET,
      optOutListName: setting(context, 'EUM_OPT_OUT_LIST'),
      timeoutMs: context.timeoutMs,
      now: context.clock.now,
      awsClient: context.awsClient,
    }),
};

/** Our account, not this message: a person must act (spend limit, reputation, a missing resource). */
const OPERATOR_ACTION_NAMES: ReadonlySet<string> = new Set([
  'ServiceQuotaExceededException',
  'AccessDeniedException',
  'ResourceNotFoundException',
]);

/**
 * Maps whatever SendTextMessage threw to an outcome. Pure and total. The rule: only proof that the
 * service did not take the message is retryable (throttling is answered before acceptance);
 * anything that leaves doubt is ambiguous, and with no idempotency token a resend could double
 * the message, so the ledger waits for the message's events instead.
 */
export function classifyEumError(error: unknown): ProviderOutcome {
  if (typeof error !== 'object' || error === null) return { kind: 'ambiguous', code: 'eum_unclassified' };
  const e = error as SdkErrorShape & { readonly Reason?: unknown };
  if (!isServiceAnswer(e)) return classifySdkTransportFailure(e, 'eum_unclassified');
  const name = typeof e.name === 'string' ? e.name : '';
  const status = typeof e.$metadata?.httpStatusCode === 'number' ? e.$metadata.httpStatusCode : undefined;
  const reason = typeof e.Reason === 'string' ? e.Reason.replace(/[^A-Z0-9_]/g, '').slice(0, 80) : '';
  const code = `${sdkAnswerCode('eum', name, status)}${reason ? `_${reason}` : ''}`;
  if (name === 'ThrottlingException') return { kind: 'retryable', code, throttled: true };
  if (name === 'ConflictException' && reason === OPTED_OUT_REASON) {
    return { kind: 'rejected', code, permanent: true, suppress: { reason: 'opted_out' } };
  }
  if (name === 'ConflictException' || name === 'ValidationException') {
    return { kind: 'rejected', code, permanent: true };
  }
  if (OPERATOR_ACTION_NAMES.has(name)) return { kind: 'operator_action_required', code };
  if (name === 'InternalServerException') return { kind: 'ambiguous', code };
  // Unmodelled names: by HTTP status.
  if (status === 429) return { kind: 'retryable', code, throttled: true };
  if (status === 401 || status === 403) return { kind: 'operator_action_required', code };
  if (status === 503) return { kind: 'retryable', code, throttled: false };
  if (status !== undefined && status >= 400 && status < 500)
    return { kind: 'rejected', code, permanent: true };
  return { kind: 'ambiguous', code };
}
