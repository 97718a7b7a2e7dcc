import { decideClaim, planOutcome } from '../../lambdas/domain/attempt.ts';
import type { Intent } from '../../lambdas/domain/intent.ts';
import { planResolution } from '../../lambdas/domain/operator-actions.ts';
import type { ProviderOutcome } from '../../lambdas/domain/outcome.ts';
import { Reason } from '../../lambdas/domain/state-machine.ts';
import { planTransition, planUnknownEscalation } from '../../lambdas/domain/transition.ts';
import { type Timeline, toTimeline } from '../../lambdas/edge/timeline.ts';
import type { ReadChannel } from '../../lambdas/use-cases/read-notice.ts';
import { newIntent, T0, TEST_TIMING } from './factories.ts';
import { TEST_ACTOR } from './ledger-properties.ts';

/** Rows as the timeline reads them from the table (the channels in `archived`: from the archive). */
export function fromLedger(
  rows: readonly [Intent, ...Intent[]],
  archived: readonly Intent['channel'][] = [],
): [ReadChannel, ...ReadChannel[]] {
  const read = (row: Intent): ReadChannel =>
    archived.includes(row.channel) ? { row, source: 'archive' } : { row, source: 'ledger' };
  const [first, ...rest] = rows;
  return [read(first), ...rest.map(read)];
}

const POLICY = { baseMs: 1000, capMs: 60_000, maxAttempts: 5 };

function claim(row: Intent, now: number): Intent {
  const decision = decideClaim(row, { now, workerId: 'w1', timing: TEST_TIMING });
  if (decision.kind !== 'claim') throw new Error(`no claim: ${decision.why}`);
  return decision.plan.next;
}

function outcome(row: Intent, result: ProviderOutcome, now: number, provider: string): Intent {
  return planOutcome(row, result, { now, provider, policy: POLICY, random: () => 0.5, timing: TEST_TIMING })
    .next;
}

/**
 * One notice through the real planners: e-mail throttled (429, Retry-After 2 s), retried and
 * delivered; SMS timed out into `unknown` and settled by an operator twelve minutes later.
 * `detail` lets a test plant hostile text in the operator's words.
 */
export function throttledAndResolvedTimeline(
  options: {
    operatorWords?: string;
    escalatedAfterMs?: number;
    unresolved?: boolean;
    /** Channels read from the archive (their rows left the table). */
    archived?: readonly Intent['channel'][];
  } = {},
): Timeline {
  const eventId = `evt_timeline_${T0}`;
  let email = newIntent({ eventId, channel: 'email' });
  email = claim(email, T0 + 200);
  email = outcome(
    email,
    { kind: 'retryable', code: 'http_429', throttled: true, retryAfterMs: 2000 },
    T0 + 300,
    'ses',
  );
  email = claim(email, T0 + 2400);
  email = outcome(email, { kind: 'accepted', receiptId: 'ses-0001' }, T0 + 2600, 'ses');
  email = planTransition(
    email,
    { to: 'delivered', reason: Reason.deliveryReported, at: T0 + 5000 },
    TEST_TIMING,
  ).next;

  let sms = newIntent({ eventId, channel: 'sms' });
  sms = claim(sms, T0 + 250);
  sms = outcome(sms, { kind: 'ambiguous', code: 'timeout' }, T0 + 10_250, 'twilio');
  if (options.escalatedAfterMs !== undefined) {
    // UNKNOWN_POLICY=escalate: handed to a person after the grace, still unknown.
    const at = T0 + 10_250 + options.escalatedAfterMs;
    sms = planUnknownEscalation(sms, { at, detail: 'outcome still unknown', dueAt: at + 60_000 }).next;
  }
  if (options.unresolved) return toTimeline(fromLedger([email, sms]));
  const resolved = planResolution(
    sms,
    {
      outcome: 'accepted',
      reason: options.operatorWords ?? 'seen in provider console',
      evidence: 'ticket OPS-7',
      actor: TEST_ACTOR,
      now: T0 + 12 * 60_000,
    },
    { timing: TEST_TIMING, policy: POLICY, random: () => 0.5 },
  );
  if (resolved.kind !== 'transition') throw new Error('not resolved');
  return toTimeline(fromLedger([email, resolved.plan.next], options.archived));
}
