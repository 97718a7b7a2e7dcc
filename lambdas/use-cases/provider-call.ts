import { DEFAULT_OPERATOR_HOLD_MS, decideClaim } from '../domain/attempt.ts';
import type { Channel } from '../domain/channel.ts';
import { failoverCause } from '../domain/failover.ts';
import { batchIdempotencyKey } from '../domain/identity.ts';
import type { Intent } from '../domain/intent.ts';
import type { ProviderOutcome } from '../domain/outcome.ts';
import { highestPriority } from '../domain/priority.ts';
import type { TemplateDefinition } from '../domain/template.ts';
import { planWait, type Wait } from '../domain/waits.ts';
import type { SendBatchMember } from '../ports/batch-records.port.ts';
import { EnvelopeUnreadableError, type SendEnvelope } from '../ports/envelope-sealer.port.ts';
import { laneRef } from '../ports/intent-queue.port.ts';
import type {
  BatchSending,
  EmailMessage,
  EmailTransport,
  SmsMessage,
  SmsTransport,
} from '../ports/transport.port.ts';
import type { SenderDependencies } from './dependencies.ts';
import { forEachLimited } from './limited.ts';
import { renderMessage } from './messages.ts';
import type { ReadyToSend } from './prepare-delivery.ts';
import { type AttemptProvider, type DeliveryResult, failPreparation, recordOutcome } from './record-step.ts';

/** A row's step, or the error that kept it from being taken (its queue message comes back). */
export type DeliveryStep = DeliveryResult | { readonly kind: 'error'; readonly error: unknown };

/** How long a "slow down" without advice (a provider that sends no Retry-After) holds the channel. */
const DEFAULT_THROTTLE_HOLD_MS = 1000;

/** The record outlives the provider's replay window by this much (clock skew, a late reconciler). */
const BATCH_RECORD_MARGIN_MS = 60 * 60_000;

/**
 * The channel's shared gate, asked ONCE per provider call, in the highest lane among the rows
 * the call carries (docs/architecture.md §11): `undefined` to go ahead; else every row goes back
 * through its own lane's queue for when the gate opens, and each is `deferred` (counted per
 * cause). A closed gate (a hold) is recorded on every row it defers, once per hold
 * (`channel_held`: the provider, the hold's reason, until when; docs/architecture.md §4 "No
 * silent waits"); the rate budget's deferral is short, bounded by the lanes' horizons, and only
 * counted.
 */
export async function admitCall(
  channel: Channel,
  provider: string,
  rows: readonly Intent[],
  deps: SenderDependencies,
): Promise<DeliveryResult | undefined> {
  if (!deps.gate) return undefined;
  const admission = await deps.gate.admit(channel, highestPriority(rows));
  if (admission.kind === 'go') return undefined;
  if (admission.held) {
    await recordHold(
      rows,
      { kind: 'channel_held', provider, reason: admission.held.reason, until: admission.untilMs },
      deps,
    );
  }
  await deps.queue.enqueue(rows.map(laneRef), { delayMs: Math.max(0, admission.untilMs - deps.clock.now()) });
  return {
    kind: 'deferred',
    untilMs: admission.untilMs,
    cause: admission.held ? 'channel_held' : 'rate_budget',
  };
}

/**
 * The hold on each row it defers, with the row due a lease after the hold ends (one conditional
 * write per row, once per hold: `planWait`). A row that moved meanwhile is left as it is; a write
 * the ledger refuses fails the call's rows before anything is sent back, so their messages come
 * back and the hold is recorded then.
 */
async function recordHold(
  rows: readonly Intent[],
  hold: Extract<Wait, { kind: 'channel_held' }>,
  deps: SenderDependencies,
): Promise<void> {
  const at = deps.clock.now();
  const errors = await forEachLimited(rows, async (row) => {
    const plan = planWait(row, hold, { at, wakeAt: hold.until }, deps.timing);
    if (plan) await deps.store.apply(plan);
  });
  const [first] = errors;
  if (first) throw first[1];
}

/**
 * Opens the envelope (unless the provider-list check already did) and renders the message;
 * throws (→ `failPreparation`) when either cannot be done.
 */
export async function openMessage(
  row: Intent,
  template: TemplateDefinition,
  deps: Pick<SenderDependencies, 'sealer'>,
  opened?: SendEnvelope,
): Promise<EmailMessage | SmsMessage> {
  if (!row.envelope) throw new EnvelopeUnreadableError('envelope already removed');
  const envelope =
    opened ?? (await deps.sealer.open(row.envelope, { noticeId: row.noticeId, channel: row.channel }));
  return renderMessage(row, template, envelope);
}

/**
 * What one provider call's answer means for the whole channel, once per call (a batch's 429 is
 * one "slow down", not a hundred): a throttle closes the shared gate, `operator_action_required`
 * holds the channel for a person (every message of the channel
 * would meet the same answer; the rows escalate durably). A call that can fail over
 * (`failoverTo`) does not hold the channel for what fails over: the fallback carries the traffic.
 */
export async function reactToOutcomes(
  channel: Channel,
  answered: readonly ProviderOutcome[],
  deps: SenderDependencies,
  failoverTo?: string | undefined,
): Promise<void> {
  const outcomes =
    failoverTo === undefined ? answered : answered.filter((o) => failoverCause(o) === undefined);
  const now = deps.clock.now();
  const throttled = outcomes.filter(
    (o): o is Extract<ProviderOutcome, { kind: 'retryable' }> => o.kind === 'retryable' && o.throttled,
  );
  if (throttled.length > 0) {
    const advice = Math.max(...throttled.map((o) => o.retryAfterMs ?? DEFAULT_THROTTLE_HOLD_MS));
    await deps.gate?.throttled(channel, now + advice).catch(() => undefined);
  }
  const held = outcomes.find(
    (o): o is Extract<ProviderOutcome, { kind: 'operator_action_required' }> =>
      o.kind === 'operator_action_required',
  );
  if (held) {
    const holdMs = held.retryAfterMs ?? deps.operatorHoldMs ?? DEFAULT_OPERATOR_HOLD_MS;
    await deps.gate?.hold(channel, now + holdMs, held.code).catch(() => undefined);
  }
}

/** A claimed row of the call, with its position among the call's rows. */
interface Member {
  readonly position: number;
  readonly sending: Intent;
}

interface RenderedMember extends Member {
  readonly message: EmailMessage | SmsMessage;
}

function sendOne(
  transport: ReadyToSend['transport'],
  message: EmailMessage | SmsMessage,
): Promise<ProviderOutcome> {
  return 'body' in message
    ? (transport as SmsTransport).send(message)
    : (transport as EmailTransport).send(message);
}

interface CallContext {
  readonly rows: readonly ReadyToSend[];
  readonly results: (DeliveryStep | undefined)[];
  readonly deps: SenderDependencies;
}

/**
 * ONE provider call for one or more ready rows of one channel (a single send is a call of one;
 * docs/architecture.md §4, "One dispatch path"): `send` for a call of one row, or a batch call
 * (`sendBatch`) when the caller gives batch ids. Every row keeps its own result, so a failed
 * ledger write fails only its row. Primary course:
 *  1. one admission to the channel's gate, booked in the highest lane among the rows; a deferral
 *     returns every row to its own lane;
 *  2. claim every row (one conditional write each; the lease starts now, after the wait); rows of
 *     a batch call carry its batch id in the claim, so membership is durable with it;
 *  3. open and render each (a row that cannot be rendered fails alone, outside the call);
 *  4. a batch call is recorded (members in order, the key, copies of their envelopes) BEFORE it
 *     is made: no record means the call was never made;
 *  5. the call itself;
 *  6. what the answer means for the channel, once (`reactToOutcomes`), then one outcome write
 *     per row with its follow-up (`recordOutcome`).
 * A crash before the batch record leaves claimed rows whose lookup finds no record: provably not
 * sent. A crash after it leaves rows whose lookup replays the recorded call under its key.
 */
export async function sendCall(
  rows: readonly ReadyToSend[],
  deps: SenderDependencies,
  /** Present: a batch call (recorded, `sendBatch`), whatever its size; absent: one row, `send`. */
  nextBatchId: (() => string) | undefined,
): Promise<DeliveryStep[]> {
  const first = rows[0];
  if (!first) return [];
  const deferred = await admitCall(
    first.row.channel,
    first.transport.provider,
    rows.map((r) => r.row),
    deps,
  );
  if (deferred) return rows.map(() => deferred);

  const ctx: CallContext = { rows, results: rows.map(() => undefined), deps };
  const batchId = nextBatchId?.();
  const claimedAt = deps.clock.now();
  const claimed = await claimAll(ctx, first.transport.provider, claimedAt, batchId);
  const members = await renderAll(ctx, claimed);
  if (members.length > 0) {
    let outcomes: ProviderOutcome[] | undefined;
    try {
      outcomes =
        batchId === undefined
          ? [await sendOne(first.transport, (members[0] as RenderedMember).message)]
          : await sendBatchCall(ctx, members, batchId, claimedAt);
    } catch (error) {
      // A transport that throws broke its contract (it answers, never throws, for a provider's
      // word): the members stay `sending`, their lease turns them `unknown`, the lookup decides.
      for (const m of members) ctx.results[m.position] = { kind: 'error', error };
    }
    if (outcomes) {
      await reactToOutcomes(first.row.channel, outcomes, deps, first.failoverTo);
      await recordAll(ctx, members, outcomes);
    }
  }
  return ctx.results.map((r) => r ?? { kind: 'left', why: 'not_in_call', state: 'unknown' });
}

async function claimAll(
  ctx: CallContext,
  provider: string,
  now: number,
  batch: string | undefined,
): Promise<Member[]> {
  const claimed: Member[] = [];
  const errors = await forEachLimited(ctx.rows, async (r, position) => {
    const decision = decideClaim(r.row, {
      now,
      workerId: ctx.deps.workerId,
      timing: ctx.deps.timing,
      provider,
      ...(batch !== undefined ? { batch } : {}),
      detail: r.claimDetail,
    });
    if (decision.kind === 'leave') {
      ctx.results[position] = { kind: 'left', why: decision.why, state: r.row.state };
      return;
    }
    const applied = await ctx.deps.store.apply(decision.plan);
    if (applied.kind === 'stale') {
      ctx.results[position] = {
        kind: 'left',
        why: 'claimed_elsewhere',
        state: applied.current?.state ?? 'missing',
      };
      return;
    }
    claimed.push({ position, sending: applied.intent });
  });
  for (const [position, error] of errors) ctx.results[position] = { kind: 'error', error };
  return claimed.sort((a, b) => a.position - b.position);
}

async function renderAll(ctx: CallContext, claimed: readonly Member[]): Promise<RenderedMember[]> {
  const members: RenderedMember[] = [];
  const errors = await forEachLimited(claimed, async (c) => {
    const ready = ctx.rows[c.position] as ReadyToSend;
    try {
      const message = await openMessage(c.sending, ready.template, ctx.deps, ready.envelope);
      members.push({ ...c, message });
    } catch (error) {
      ctx.results[c.position] = await failPreparation(c.sending, error, ctx.deps);
    }
  });
  for (const [i, error] of errors) ctx.results[(claimed[i] as Member).position] = { kind: 'error', error };
  return members.sort((a, b) => a.position - b.position);
}

/**
 * Records the call, then makes it (steps 4 and 5 of `sendCall` for a batch call). Undefined
 * when the record could not be written: then no call was made, and every member is told "not
 * sent" at once (provably not accepted) rather than left to its lease.
 */
async function sendBatchCall(
  ctx: CallContext,
  members: readonly RenderedMember[],
  batchId: string,
  createdAt: number,
): Promise<ProviderOutcome[] | undefined> {
  const transport = (ctx.rows[0] as ReadyToSend).transport as EmailTransport & BatchSending<EmailMessage>;
  const idempotencyKey = batchIdempotencyKey(batchId);
  try {
    await ctx.deps.store.recordBatch({
      id: batchId,
      channel: (members[0] as Member).sending.channel,
      provider: transport.provider,
      idempotencyKey,
      createdAt,
      expiresAt: createdAt + transport.replayWindowMs + BATCH_RECORD_MARGIN_MS,
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
    // If the ledger refuses that too, the rows' messages come back.
    const notSent: ProviderOutcome = { kind: 'retryable', code: 'batch_not_recorded', throttled: false };
    await forEachLimited(members, async (m) => {
      ctx.results[m.position] = await recordOutcome(m.sending, notSent, attemptOf(ctx), ctx.deps).catch(
        () => ({ kind: 'error' as const, error }),
      );
    });
    return undefined;
  }
  // Batch calls are formed for a batch-capable e-mail transport only (./deliver.ts).
  const messages = members.map((m) => m.message as EmailMessage);
  const answered = await transport.sendBatch({ idempotencyKey, messages });
  // One outcome per member, in order; anything else cannot be mapped back and is ambiguous for all.
  return answered.length === members.length
    ? answered
    : members.map(() => ({ kind: 'ambiguous', code: 'batch_answer_unmapped' }));
}

async function recordAll(
  ctx: CallContext,
  members: readonly Member[],
  outcomes: readonly ProviderOutcome[],
): Promise<void> {
  const attempt = attemptOf(ctx);
  const errors = await forEachLimited(members, async (m, i) => {
    ctx.results[m.position] = await recordOutcome(
      m.sending,
      outcomes[i] as ProviderOutcome,
      attempt,
      ctx.deps,
    );
  });
  for (const [i, error] of errors) ctx.results[(members[i] as Member).position] = { kind: 'error', error };
}

/** The call's provider (every row of a call goes to one: ./deliver.ts), and its fallback if any. */
function attemptOf(ctx: CallContext): AttemptProvider {
  const first = ctx.rows[0] as ReadyToSend;
  return { provider: first.transport.provider, failoverTo: first.failoverTo };
}
