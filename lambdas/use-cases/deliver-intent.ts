import { idempotencyKey } from '../domain/identity.ts';
import {
  decideClaim,
  type Intent,
  planOutcome,
  planTransition,
  type TransitionPlan,
} from '../domain/intent.ts';
import type { ProviderOutcome } from '../domain/outcome.ts';
import { Reason } from '../domain/state-machine.ts';
import { isSuppressed } from '../domain/suppression.ts';
import { renderEmail, renderSms } from '../domain/template.ts';
import { EnvelopeUnreadableError } from '../ports/envelope-sealer.port.ts';
import type { IntentRef } from '../ports/intent-queue.port.ts';
import type { Dependencies } from './dependencies.ts';

/** What one queue message led to; safe to log (no destination, no content). */
export type DeliveryResult =
  | { readonly kind: 'missing' }
  | { readonly kind: 'left'; readonly why: string; readonly state: string }
  /** The channel's provider asked everyone to wait; the message comes back then. */
  | { readonly kind: 'deferred'; readonly untilMs: number }
  | {
      readonly kind: 'recorded';
      readonly state: string;
      readonly reason: string;
      readonly attempt: number;
      readonly outcome?: string;
    };

/** How long a "slow down" without advice (SES sends no Retry-After) holds the channel. */
const DEFAULT_THROTTLE_HOLD_MS = 1000;

/** The correlation id providers carry back to us (SES tag, Twilio callback query). */
export function correlationId(ref: IntentRef): string {
  return `${ref.noticeId}-${ref.channel}`;
}

export function parseCorrelationId(value: string): IntentRef | undefined {
  const match = /^(ntc_[a-z2-7]{26})-(email|sms)$/.exec(value);
  return match ? { noticeId: match[1] as string, channel: match[2] as IntentRef['channel'] } : undefined;
}

async function applyAndFollowUp(plan: TransitionPlan, deps: Dependencies): Promise<Intent | undefined> {
  const result = await deps.store.apply(plan);
  if (result.kind === 'stale') return undefined;
  const row = result.intent;
  if (row.state === 'retry_scheduled' && row.nextAttemptAt !== undefined) {
    try {
      await deps.scheduler.scheduleAttempt(row, row.attempts + 1, row.nextAttemptAt);
    } catch {
      // The row is due at nextAttemptAt + lease in the open index: the reconciler re-enqueues it.
    }
  }
  if (row.state === 'failed' && plan.record.reason !== Reason.providerRejected) {
    await deps.escalations
      .publish({
        noticeId: row.noticeId,
        channel: row.channel,
        reason: plan.record.reason,
        state: row.state,
        at: plan.record.at,
        detail: plan.record.detail,
      })
      .catch(() => undefined);
  }
  return row;
}

function recorded(plan: TransitionPlan, outcome?: ProviderOutcome): DeliveryResult {
  return {
    kind: 'recorded',
    state: plan.next.state,
    reason: plan.record.reason,
    attempt: plan.next.attempts,
    ...(outcome ? { outcome: outcome.kind } : {}),
  };
}

/**
 * If our lease expired while we waited on the provider, the reconciler may have moved the
 * row to `unknown` for this very attempt. What we learned still counts: record it from there
 * (`unknown → accepted / retry_scheduled / failed`), so the reconciler need not ask.
 */
function planLateOutcome(
  current: Intent,
  attempt: number,
  outcome: ProviderOutcome,
  deps: Dependencies,
  provider: string,
) {
  if (current.state !== 'unknown' || current.attempts !== attempt || outcome.kind === 'ambiguous')
    return undefined;
  // planOutcome is written for rows in `sending`; from `unknown` the same targets are legal.
  return planOutcome({ ...current, state: 'unknown' }, outcome, {
    now: deps.clock.now(),
    provider,
    policy: deps.retryPolicy,
    random: deps.random,
    timing: deps.timing,
  });
}

/**
 * The sender. Primary course:
 *  1. read the row (consistent); anything but reserved / due retry_scheduled → leave it;
 *  2. suppression check → `suppressed` (never reaches a transport);
 *  3. claim with a lease (one conditional write; losers leave);
 *  4. open the envelope, render, make one provider call with a timeout;
 *  5. record the typed outcome with one conditional write; schedule the next attempt or escalate.
 * Throws only when the ledger itself cannot be read or written, so the message is redelivered.
 */
export async function deliverIntent(ref: IntentRef, deps: Dependencies): Promise<DeliveryResult> {
  const row = await deps.store.get(ref.noticeId, ref.channel);
  if (!row) return { kind: 'missing' };
  const now = deps.clock.now();
  const claim = decideClaim(row, { now, workerId: deps.workerId, timing: deps.timing });
  if (claim.kind === 'leave') {
    if (claim.why === 'past_deadline') {
      const plan = planTransition(
        row,
        { to: 'failed', reason: Reason.deadlineExceeded, at: now },
        deps.timing,
      );
      return (await applyAndFollowUp(plan, deps))
        ? recorded(plan)
        : { kind: 'left', why: 'raced', state: row.state };
    }
    return { kind: 'left', why: claim.why, state: row.state };
  }

  const suppression = await deps.store.getSuppression(row.channel, row.destination.fingerprint);
  if (suppression && isSuppressed(suppression)) {
    const plan = planTransition(
      row,
      {
        to: row.state === 'reserved' ? 'suppressed' : 'failed',
        reason: Reason.onSuppressionList,
        at: now,
        detail: suppression.latest.reason,
      },
      deps.timing,
    );
    return (await applyAndFollowUp(plan, deps))
      ? recorded(plan)
      : { kind: 'left', why: 'raced', state: row.state };
  }

  if (deps.gate) {
    const admission = await deps.gate.admit(ref.channel);
    if (admission.kind === 'wait') {
      await deps.queue.enqueue([ref], { delayMs: Math.max(0, admission.untilMs - deps.clock.now()) });
      return { kind: 'deferred', untilMs: admission.untilMs };
    }
  }

  // Re-planned after the admission wait so the lease starts when the claim is written.
  const fresh = deps.gate
    ? decideClaim(row, { now: deps.clock.now(), workerId: deps.workerId, timing: deps.timing })
    : claim;
  if (fresh.kind === 'leave') return { kind: 'left', why: fresh.why, state: row.state };
  const claimed = await deps.store.apply(fresh.plan);
  if (claimed.kind === 'stale')
    return { kind: 'left', why: 'claimed_elsewhere', state: claimed.current?.state ?? 'missing' };
  const sending = claimed.intent;
  const attempt = sending.attempts;

  let prepared: PreparedSend;
  try {
    prepared = await prepareSend(sending, deps);
  } catch (error) {
    const reason = error instanceof EnvelopeUnreadableError ? Reason.envelopeUnreadable : Reason.renderFailed;
    const plan = planTransition(
      sending,
      {
        to: 'failed',
        reason,
        at: deps.clock.now(),
        attempt,
        detail: error instanceof Error ? error.name : 'error',
      },
      deps.timing,
    );
    await applyAndFollowUp(plan, deps);
    return recorded(plan);
  }

  const outcome = await prepared.send();
  if (outcome.kind === 'retryable' && outcome.throttled) {
    await deps.gate
      ?.throttled(ref.channel, deps.clock.now() + (outcome.retryAfterMs ?? DEFAULT_THROTTLE_HOLD_MS))
      .catch(() => undefined);
  } else if (outcome.kind === 'accepted') {
    deps.gate?.accepted(ref.channel);
  }
  const plan = planOutcome(sending, outcome, {
    now: deps.clock.now(),
    provider: prepared.provider,
    policy: deps.retryPolicy,
    random: deps.random,
    timing: deps.timing,
  });
  if (await applyAndFollowUp(plan, deps)) return recorded(plan, outcome);

  const current = await deps.store.get(ref.noticeId, ref.channel);
  const late = current && planLateOutcome(current, attempt, outcome, deps, prepared.provider);
  if (late && (await applyAndFollowUp(late, deps))) return recorded(late, outcome);
  return { kind: 'left', why: 'outcome_raced', state: current?.state ?? 'missing' };
}

interface PreparedSend {
  readonly provider: string;
  /** Exactly one provider call. */
  readonly send: () => Promise<ProviderOutcome>;
}

/** Opens the envelope and renders; throws (→ `failed`) when either cannot be done. */
async function prepareSend(row: Intent, deps: Dependencies): Promise<PreparedSend> {
  const template = deps.catalog.lookup(row.templateId, row.templateVersion);
  if (!template)
    throw new Error(`template ${row.templateId} ${row.templateVersion} missing from the catalog`);
  if (!row.envelope) throw new EnvelopeUnreadableError('envelope already removed');
  const envelope = await deps.sealer.open(row.envelope, { noticeId: row.noticeId, channel: row.channel });
  const base = {
    to: envelope.destination,
    correlationId: correlationId(row),
    idempotencyKey: idempotencyKey(row.noticeId, row.channel),
  };
  if (row.channel === 'email') {
    const transport = deps.transports.email;
    if (!transport) throw new Error('no email transport configured');
    const message = { ...base, ...renderEmail(template, envelope.variables) };
    return { provider: transport.provider, send: () => transport.send(message) };
  }
  const transport = deps.transports.sms;
  if (!transport) throw new Error('no sms transport configured');
  const message = { ...base, body: renderSms(template, envelope.variables).text };
  return { provider: transport.provider, send: () => transport.send(message) };
}
