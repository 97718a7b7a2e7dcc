import type { LookupVerdict } from '../../domain/reconcile.ts';
import type { LookupFacet } from '../../ports/provider.port.ts';
import type { LookupQuery, ProviderLookup } from '../../ports/provider-lookup.port.ts';
import { apiUrl, INTENT_ARG, isMessageId, receiptOf, type SendGridApiConfig } from './api.ts';
import { descriptor } from './descriptor.ts';
import { sendGridConfigOf } from './transport.ts';

/**
 * With the Email Activity add-on (`SENDGRID_EMAIL_ACTIVITY=true`): `GET /v3/messages` filtered
 * by the intent's custom arg. One message → `found` (its `msg_id`'s prefix is the send's
 * `X-Message-Id`); several distinct sends → `undecidable`; none → `absent` (which the reconciler
 * trusts only after UNKNOWN_GRACE_MS: the feed lags the send). Without the add-on there is no
 * way to ask, and nothing is pretended: `undecidable`, left to the Event Webhook and the policy.
 * The Activity API is rate limited hard (a handful of calls a minute): a 429 is `undecidable`.
 */
export class SendGridProviderLookup implements ProviderLookup {
  readonly provider = descriptor.id;
  constructor(
    private readonly config: SendGridApiConfig,
    private readonly activity: boolean,
  ) {}

  async lookup(query: LookupQuery): Promise<LookupVerdict> {
    if (!this.activity) {
      return {
        kind: 'undecidable',
        detail:
          'no Email Activity add-on (SENDGRID_EMAIL_ACTIVITY): settled by the Event Webhook or by policy',
      };
    }
    const filter = `unique_args['${INTENT_ARG}']="${query.correlationId}"`;
    let response: Response;
    try {
      response = await (this.config.fetch ?? fetch)(
        apiUrl(this.config, `/v3/messages?limit=10&query=${encodeURIComponent(filter)}`),
        {
          headers: { authorization: `Bearer ${this.config.apiKey}`, accept: 'application/json' },
          signal: AbortSignal.timeout(this.config.timeoutMs),
        },
      );
    } catch (error) {
      return {
        kind: 'undecidable',
        detail: `sendgrid activity: ${error instanceof Error ? error.name : 'error'}`,
      };
    }
    if (response.status !== 200) {
      await response.arrayBuffer().catch(() => undefined);
      return { kind: 'undecidable', detail: `sendgrid activity answered ${response.status}` };
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      return { kind: 'undecidable', detail: 'sendgrid activity: unreadable answer' };
    }
    const messages = (body as { messages?: unknown } | null)?.messages;
    if (!Array.isArray(messages))
      return { kind: 'undecidable', detail: 'sendgrid activity: no messages list' };
    const receipts = new Set<string>();
    for (const m of messages as { msg_id?: unknown }[]) {
      if (typeof m?.msg_id !== 'string') continue;
      const receipt = receiptOf(m.msg_id);
      if (isMessageId(receipt)) receipts.add(receipt);
    }
    if (receipts.size === 0)
      return { kind: 'absent', detail: 'no message with this intent in Email Activity' };
    if (receipts.size > 1) {
      return { kind: 'undecidable', detail: `${receipts.size} sends carry this intent in Email Activity` };
    }
    return {
      kind: 'found',
      receiptId: [...receipts][0] as string,
      detail: 'found in Email Activity by its custom arg',
    };
  }
}

/** The lookup facet. */
export const facet: LookupFacet = (context) =>
  new SendGridProviderLookup(sendGridConfigOf(context), context.settings.SENDGRID_EMAIL_ACTIVITY === 'true');
