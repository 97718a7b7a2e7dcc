import { randomBytes } from 'node:crypto';
import { decideClaim } from '../domain/attempt.ts';
import { batchIdempotencyKey } from '../domain/identity.ts';
import type { Intent } from '../domain/intent.ts';
import type { ProviderOutcome } from '../domain/outcome.ts';
import type { SendBatchMember } from '../ports/batch-records.port.ts';
import type { IntentRef } from '../ports/intent-queue.port.ts';
import type { BatchSending, EmailMessage, EmailTransport } from '../ports/transport.port.ts';
import {
  admitCall,
  type DeliveryResult,
  deliverReady,
  failPreparation,
  openMessage,
  prepareDelivery,
  type ReadyToSend,
  reactToOutcomes,
  recordOutcome,
} from './deliver-intent.ts';
import type { SenderDependencies } from './dependencies.ts';

/** A record's step, or the error that kept it from being taken (its queue message comes back). */
export type BatchStep = DeliveryResult | { readonly kind: 'error'; readonly error: unknown };

export interface BatchOptions {
  /** `EMAIL_BATCH_MAX`, capped by the transport's own limit; below 2 every row is sent alone. */
  readonly maxBatch: number;
  /** Fresh per call; injectable for tests. */
  readonly newBatchId?: () => string;
}

/** How many rows are read, claimed or recorded at once (ledger requests in flight). */
const PARALLEL = 16;

/** `bat_` + 26 base32 characters (130 random bits): the batch record's id, named on every claim. */
export function newBatchId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  const bytes = randomBytes(26);
  return `bat_${[...bytes].map((b) => alphabet[b & 31]).join('')}`;
}

/**
 * The sender for a whole queue batch (one Lambda invocation's records) on a provider that takes
 * many messages per call (docs/architecture.md §4, "Batches"). Every record keeps its own
 * result, so a failed ledger write fails only its record. Primary course:
 *  1. each record as the single sender would: read, leave / fail / suppress what is not to be
 *     sent (`prepareDelivery`); a repeated message for a row in this batch is left;
 *  2. fewer than two rows ready, or no batch transport: each is sent alone (`deliverReady`);
 *  3. else per call of at most `maxBatch` rows: one gate admission; claim every row with the
 *     batch id (one conditional write each, the same claim as a single send, membership in it);
 *     open and render (a row that fails here is failed alone); record the batch (members in
 *     order, the key, copies of their envelopes) BEFORE the call; one provider call; one
 *     outcome write per member, from its own index of the answer.
 * A crash before the batch record leaves claimed rows whose lookup finds no record: provably
 * not sent. A crash after it leaves rows whose lookup replays the recorded call under its key:
 * the provider answers with the ids it gave (or, if the call never reached it, sends it once).
 */
export async function deliverBatch(
  refs: readonly IntentRef[],
  deps: SenderDependencies,
  options: BatchOptions,
): Promise<BatchStep[]> {
  const steps: (BatchStep | undefined)[] = refs.map(() => undefined);
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

  const transport = ready[0]?.transport as EmailTransport | undefined;
  const limit = Math.min(options.maxBatch, transport?.maxBatch ?? 1);
  if (!transport?.sendBatch || limit < 2 || ready.length < 2) {
    const errors = await forEachLimited(ready, async (r) => {
      steps[r.index] = await deliverReady(r, deps);
    });
    for (const [position, error] of errors)
      steps[(ready[position] as { index: number }).index] = { kind: 'error', error };
    return steps as BatchStep[];
  }
  const batching = transport as EmailTransport & BatchSending<EmailMessage>;
  for (let start = 0; start < ready.length; start += limit) {
    const chunk = ready.slice(start, start + limit);
    try {
      const results = await sendOneCall(chunk, batching, deps, options.newBatchId ?? newBatchId);
      chunk.forEach((r, i) => {
        steps[r.index] = results[i] as BatchStep;
      });
    } catch (error) {
      for (const r of chunk) steps[r.index] ??= { kind: 'error', error };
    }
  }
  return steps as BatchStep[];
}

/** One provider batch call for `chunk` (all ready, one channel, one transport); a result per row. */
async function sendOneCall(
  chunk: readonly ReadyToSend[],
  transport: EmailTransport & BatchSending<EmailMessage>,
  deps: SenderDependencies,
  nextBatchId: () => string,
): Promise<BatchStep[]> {
  const results: (BatchStep | undefined)[] = chunk.map(() => undefined);
  const channel = (chunk[0] as ReadyToSend).row.channel;
  const refs = chunk.map(({ row }) => ({ noticeId: row.noticeId, channel: row.channel }));
  const deferred = await admitCall(channel, refs, deps);
  if (deferred) return chunk.map(() => deferred);

  // Claims: the batch id rides on each claim, so membership is durable with the lease.
  const batchId = nextBatchId();
  const claimedAt = deps.clock.now();
  const claimed: { position: number; sending: Intent; ready: ReadyToSend }[] = [];
  const claimErrors = await forEachLimited(chunk, async (r, position) => {
    const decision = decideClaim(r.row, {
      now: claimedAt,
      workerId: deps.workerId,
      timing: deps.timing,
      provider: transport.provider,
      batch: batchId,
      detail: r.claimDetail,
    });
    if (decision.kind === 'leave') {
      results[position] = { kind: 'left', why: decision.why, state: r.row.state };
      return;
    }
    const applied = await deps.store.apply(decision.plan);
    if (applied.kind === 'stale') {
      results[position] = {
        kind: 'left',
        why: 'claimed_elsewhere',
        state: applied.current?.state ?? 'missing',
      };
      return;
    }
    claimed.push({ position, sending: applied.intent, ready: r });
  });
  for (const [position, error] of claimErrors) results[position] = { kind: 'error', error };
  claimed.sort((a, b) => a.position - b.position);

  // Envelopes and rendering: a row that cannot be rendered is failed alone, outside the call.
  const members: { position: number; sending: Intent; message: EmailMessage }[] = [];
  const openErrors = await forEachLimited(claimed, async (c) => {
    try {
      const message = await openMessage(c.sending, c.ready.template, deps, c.ready.envelope);
      if ('body' in message) throw new TypeError('a batch call carries email only');
      members.push({ position: c.position, sending: c.sending, message });
    } catch (error) {
      results[c.position] = await failPreparation(c.sending, error, deps);
    }
  });
  for (const [i, error] of openErrors)
    results[(claimed[i] as { position: number }).position] = { kind: 'error', error };
  members.sort((a, b) => a.position - b.position);
  if (members.length === 0) return results as BatchStep[];

  // The durable record, before the call: members in the call's order, the key, their envelopes.
  const idempotencyKey = batchIdempotencyKey(batchId);
  try {
    await deps.store.recordBatch({
      id: batchId,
      channel,
      provider: transport.provider,
      idempotencyKey,
      createdAt: claimedAt,
      expiresAt: claimedAt + transport.replayWindowMs + BATCH_RECORD_MARGIN_MS,
      members: members.map(
        ({ sending }): SendBatchMember => ({
          noticeId: sending.noticeId,
          channel: sending.channel,
          templateId: sending.templateId,
          templateVersion: sending.templateVersion,
          deadline: sending.deadline,
          envelope: sending.envelope as string,
        }),
      ),
    });
  } catch (error) {
    // No record, no call: every member is provably unsent. Say so now rather than leave it to
    // the lease; if the ledger refuses that too, the records' messages come back.
    const notSent: ProviderOutcome = { kind: 'retryable', code: 'batch_not_recorded', throttled: false };
    await forEachLimited(members, async (m) => {
      results[m.position] = await recordOutcome(m.sending, notSent, transport.provider, deps).catch(() => ({
        kind: 'error' as const,
        error,
      }));
    });
    return results as BatchStep[];
  }

  const answered = await transport.sendBatch({ idempotencyKey, messages: members.map((m) => m.message) });
  // One outcome per member, in order; anything else cannot be mapped back and is ambiguous for all.
  const outcomes: ProviderOutcome[] =
    answered.length === members.length
      ? answered
      : members.map(() => ({ kind: 'ambiguous', code: 'batch_answer_unmapped' }));
  await reactToOutcomes(channel, outcomes, deps);
  const recordErrors = await forEachLimited(members, async (m, i) => {
    results[m.position] = await recordOutcome(
      m.sending,
      outcomes[i] as ProviderOutcome,
      transport.provider,
      deps,
    );
  });
  for (const [i, error] of recordErrors)
    results[(members[i] as { position: number }).position] = { kind: 'error', error };
  return results as BatchStep[];
}

/** The record outlives the provider's replay window by this much (clock skew, a late reconciler). */
const BATCH_RECORD_MARGIN_MS = 60 * 60_000;

/** Runs `fn` over `items`, PARALLEL at a time; returns the errors by index instead of throwing. */
async function forEachLimited<T>(
  items: readonly T[],
  fn: (item: T, index: number) => Promise<void>,
): Promise<[number, unknown][]> {
  const errors: [number, unknown][] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(PARALLEL, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        try {
          await fn(items[index] as T, index);
        } catch (error) {
          errors.push([index, error]);
        }
      }
    }),
  );
  return errors;
}
