import type { LookupVerdict } from '../../domain/reconcile.ts';
import type { LookupFacet } from '../../ports/provider.port.ts';
import type { LookupQuery } from '../../ports/provider-lookup.port.ts';
import { CALLS, call, callOf, errorCode, recordId } from './api.ts';
import { type InfraiTransportOptions, infraiOptions, sendOnce } from './transport.ts';

/**
 * The gateway keeps an idempotency key about a day ("24-hour dedup window"); a replay later than
 * this could be sent as a new message, so it is not made.
 */
export const REPLAY_WINDOW_MS = 23 * 3_600_000;

/**
 * An ambiguous send, settled: with the gateway's id, read the record (`GET …/get/{id}`); without
 * one (the timeout left none), replay the very same request under the same Idempotency-Key — the
 * gateway answers with the original record if it took the first, and sends it now (once) if it
 * did not. Either way the answer is `found`: exactly one message exists. A replay is never made
 * past the notice's deadline or outside the key's window; then the row waits for policy.
 */
export class InfraiLookup {
  readonly provider = 'infrai';
  constructor(private readonly options: InfraiTransportOptions) {}

  async lookup(query: LookupQuery): Promise<LookupVerdict> {
    const channel = query.correlationId.endsWith('-sms') ? 'sms' : 'email';
    if (query.receiptId) {
      const answer = await call(this.options, {
        method: 'GET',
        path: CALLS[callOf(channel, 'get')].path.replace('{id}', encodeURIComponent(query.receiptId)),
      });
      if (answer.kind === 'answer' && answer.envelope?.ok && recordId(answer.envelope.data)) {
        return { kind: 'found', receiptId: query.receiptId, detail: 'record read by id' };
      }
      return {
        kind: 'undecidable',
        detail: `infrai get: ${answer.kind === 'failed' ? 'no answer' : errorCode(answer.envelope?.error, answer.status)}`,
      };
    }
    const replay = query.replay;
    const now = (this.options.now ?? Date.now)();
    if (!replay) return { kind: 'undecidable', detail: 'no message to replay' };
    if (replay.deadline !== undefined && now >= replay.deadline) {
      return { kind: 'undecidable', detail: 'past the deadline: no replay' };
    }
    if (now - query.attemptStartedAt > REPLAY_WINDOW_MS) {
      return { kind: 'undecidable', detail: 'outside the idempotency window: no replay' };
    }
    const outcome = await sendOnce(channel, replay, this.options);
    if (outcome.kind === 'accepted') {
      return { kind: 'found', receiptId: outcome.receiptId, detail: 'replayed under the idempotency key' };
    }
    return { kind: 'undecidable', detail: `infrai replay: ${outcome.kind} ${outcome.code}` };
  }
}

export const facet: LookupFacet = (context) => new InfraiLookup(infraiOptions(context));
