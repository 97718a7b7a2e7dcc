import { randomBytes } from 'node:crypto';
import type { IntentRef } from '../ports/intent-queue.port.ts';
import type { SenderDependencies } from './dependencies.ts';
import { forEachLimited } from './limited.ts';
import { prepareDelivery, type ReadyToSend } from './prepare-delivery.ts';
import { type DeliveryStep, sendCall } from './provider-call.ts';
import type { DeliveryResult } from './record-step.ts';

export type { DeliveryStep } from './provider-call.ts';
export type { DeliveryResult } from './record-step.ts';

export interface DeliverOptions {
  /**
   * Most rows per provider call: `EMAIL_BATCH_MAX`, capped by the transport's own limit; a
   * transport without a batch call sends one row per call whatever this says. @default 1
   */
  readonly maxBatch?: number;
  /** Fresh per multi-row call; injectable for tests. */
  readonly newBatchId?: () => string;
}

/** `bat_` + 26 base32 characters (130 random bits): the batch record's id, named on every claim. */
export function newBatchId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  const bytes = randomBytes(26);
  return `bat_${[...bytes].map((b) => alphabet[b & 31]).join('')}`;
}

/**
 * The sender: the references of one invocation (one queue message each), delivered through the
 * one dispatch path (docs/architecture.md §4, "One dispatch path"). Every reference keeps its own
 * step, so a failed ledger write fails only its message. Primary course:
 *  1. each row read and made ready, or settled / left (`prepareDelivery`: not claimable, past its
 *     deadline, suppressed by us or by the provider, not sendable by this deployment); a repeated
 *     message for a row already in this invocation is left;
 *  2. the ready rows of a channel cut into provider calls of at most `maxBatch` rows (one row per
 *     call unless the transport has a batch call);
 *  3. each call through `sendCall`: one gate admission in its highest lane, claims, one provider
 *     call, one outcome write per row with its follow-up. Calls run side by side, so the calls of
 *     one invocation book the channel's budget together.
 */
export async function deliver(
  refs: readonly IntentRef[],
  deps: SenderDependencies,
  options: DeliverOptions = {},
): Promise<DeliveryStep[]> {
  const steps: (DeliveryStep | undefined)[] = refs.map(() => undefined);
  const firstOf = new Map<string, number>();
  refs.forEach((ref, index) => {
    const key = `${ref.noticeId}|${ref.channel}`;
    if (firstOf.has(key)) steps[index] = { kind: 'left', why: 'repeated_in_batch', state: 'unread' };
    else firstOf.set(key, index);
  });

  const ready: (ReadyToSend & { readonly index: number })[] = [];
  const unique = [...firstOf.values()];
  const prepareErrors = await forEachLimited(unique, async (index) => {
    const prepared = await prepareDelivery(refs[index] as IntentRef, deps);
    if (prepared.kind === 'done') steps[index] = prepared.result;
    else ready.push({ ...prepared, index });
  });
  for (const [position, error] of prepareErrors) steps[unique[position] as number] = { kind: 'error', error };
  ready.sort((a, b) => a.index - b.index);

  const calls = cutIntoCalls(ready, options.maxBatch ?? 1);
  const nextBatchId = options.newBatchId ?? newBatchId;
  const callErrors = await forEachLimited(calls, async ({ rows: call, batched }) => {
    const results = await sendCall(call, deps, batched ? nextBatchId : undefined);
    call.forEach((r, i) => {
      steps[r.index] = results[i] as DeliveryStep;
    });
  });
  for (const [position, error] of callErrors) {
    for (const r of calls[position]?.rows ?? []) steps[r.index] ??= { kind: 'error', error };
  }
  return steps as DeliveryStep[];
}

/**
 * Ready rows, in message order, cut into provider calls. Where the channel's transport has a
 * batch call and at least two rows are ready, they go in batch calls (chunks of at most the
 * smaller of `maxBatch` and the transport's own limit; a remainder of one is still a batch call,
 * recorded like the others); otherwise one row per call, each under its own key.
 */
function cutIntoCalls<R extends ReadyToSend>(
  ready: readonly R[],
  maxBatch: number,
): { readonly rows: R[]; readonly batched: boolean }[] {
  const calls: { rows: R[]; batched: boolean }[] = [];
  // One call goes to one provider: a channel's rows split by the provider of their attempt (a
  // channel with a fallback: lambdas/domain/failover.ts).
  const byChannel = new Map<string, R[]>();
  for (const r of ready) {
    const key = `${r.row.channel}|${r.transport.provider}`;
    byChannel.set(key, [...(byChannel.get(key) ?? []), r]);
  }
  for (const rows of byChannel.values()) {
    const transport = (rows[0] as R).transport;
    const transportLimit = 'sendBatch' in transport && transport.sendBatch ? (transport.maxBatch ?? 1) : 1;
    const limit = Math.max(1, Math.min(maxBatch, transportLimit));
    const batched = limit > 1 && rows.length > 1;
    for (let start = 0; start < rows.length; start += limit) {
      calls.push({ rows: rows.slice(start, start + limit), batched });
    }
  }
  return calls;
}

/**
 * One reference through the same path (a call of one). Throws only when the ledger itself could
 * not be read or written, so that its message is delivered again.
 */
export async function deliverIntent(ref: IntentRef, deps: SenderDependencies): Promise<DeliveryResult> {
  const [step] = await deliver([ref], deps);
  if (!step) throw new Error('deliver returned no step');
  if (step.kind === 'error') throw step.error;
  return step;
}
