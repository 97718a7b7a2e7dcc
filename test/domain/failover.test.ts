/**
 * Provider failover's policy (lambdas/domain/failover.ts): which outcomes may move a row's next
 * attempt to the channel's fallback, which provider each attempt goes to, and the transition the
 * failover records.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decideClaim, planOutcome } from '../../lambdas/domain/attempt.ts';
import {
  FailoverCause,
  failoverCause,
  failoverTarget,
  providerForAttempt,
} from '../../lambdas/domain/failover.ts';
import type { Intent } from '../../lambdas/domain/intent.ts';
import { NotReached, type ProviderOutcome, TIMEOUT_CODE } from '../../lambdas/domain/outcome.ts';
import { outcomeForNetworkError } from '../../lambdas/providers/fetch-send.ts';
import { newIntent, T0, TEST_TIMING } from '../helpers/factories.ts';

const route = { primary: 'twilio', fallback: 'eum' };
const policy = { baseMs: 1000, capMs: 60_000, maxAttempts: 4 };

function sending(row: Intent = newIntent({ channel: 'sms' }), provider = 'twilio'): Intent {
  const claim = decideClaim(row, { now: T0, workerId: 'w', timing: TEST_TIMING, provider });
  if (claim.kind !== 'claim') throw new Error(claim.why);
  return claim.plan.next;
}

const ctx = (failoverTo: string | undefined) => ({
  now: T0 + 10,
  provider: 'twilio',
  policy,
  random: () => 0.5,
  timing: TEST_TIMING,
  failoverTo,
});

describe('failoverCause: only proof that the primary does not hold the message', () => {
  it.each(Object.values(NotReached))('a retryable %s never reached the provider', (code) => {
    expect(failoverCause({ kind: 'retryable', code, throttled: false })).toBe(FailoverCause.neverReached);
  });

  it('an account refusal (401/403, suspended, spend limit, credit) is account_refused', () => {
    expect(failoverCause({ kind: 'operator_action_required', code: 'twilio_20003' })).toBe(
      FailoverCause.accountRefused,
    );
  });

  it.each<[string, ProviderOutcome]>([
    ['a timeout', { kind: 'ambiguous', code: TIMEOUT_CODE }],
    ['a reset after the request was written', { kind: 'ambiguous', code: 'connection_reset' }],
    ['a 500', { kind: 'ambiguous', code: 'twilio_500' }],
    ['a 503', { kind: 'retryable', code: 'twilio_503', throttled: false }],
    ['a 429', { kind: 'retryable', code: 'twilio_429', throttled: true }],
    ['a 408', { kind: 'retryable', code: 'twilio_408', throttled: false }],
    ['a rejection of the message', { kind: 'rejected', code: 'twilio_21211', permanent: true }],
    ['an acceptance', { kind: 'accepted', receiptId: 'SM1' }],
  ])('%s is no cause', (_, outcome) => {
    expect(failoverCause(outcome)).toBeUndefined();
  });

  it('the shared network classifier speaks the domain codes: ECONNREFUSED fails over, a reset does not', () => {
    const refused = outcomeForNetworkError(
      Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }),
    );
    const reset = outcomeForNetworkError(
      Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } }),
    );
    expect(failoverCause(refused)).toBe(FailoverCause.neverReached);
    expect(failoverCause(reset)).toBeUndefined();
  });
});

describe('which provider an attempt goes to', () => {
  it('a new row goes to the primary; a row that failed over stays on the fallback', () => {
    expect(providerForAttempt({ provider: undefined }, route)).toBe('twilio');
    expect(providerForAttempt({ provider: 'twilio' }, route)).toBe('twilio');
    expect(providerForAttempt({ provider: 'eum' }, route)).toBe('eum');
    // Without a fallback everything goes to the primary, whatever an old row records.
    expect(providerForAttempt({ provider: 'eum' }, { primary: 'twilio' })).toBe('twilio');
  });

  it('only the primary has somewhere to fail over to (one way, at most once per row)', () => {
    expect(failoverTarget('twilio', route)).toBe('eum');
    expect(failoverTarget('eum', route)).toBeUndefined();
    expect(failoverTarget('twilio', { primary: 'twilio' })).toBeUndefined();
  });
});

describe('planOutcome with a fallback', () => {
  it('connection refused: due again at once via the fallback, the attempt not counted, both providers named', () => {
    const row = sending();
    const plan = planOutcome(
      row,
      { kind: 'retryable', code: 'connection_refused', throttled: false },
      ctx('eum'),
    );
    expect(plan.next).toMatchObject({
      state: 'retry_scheduled',
      provider: 'eum',
      attempts: 0,
      nextAttemptAt: T0 + 10,
    });
    expect(plan.record).toMatchObject({ reason: 'failover', attempt: 1 });
    expect(plan.record.detail).toMatch(/^twilio never_reached \(connection_refused\); next attempt via eum/);
    // The next claim goes to the fallback.
    expect(providerForAttempt(plan.next, route)).toBe('eum');
  });

  it('an account refusal fails over instead of holding the row for an operator', () => {
    const plan = planOutcome(
      sending(),
      { kind: 'operator_action_required', code: 'twilio_20003' },
      ctx('eum'),
    );
    expect(plan.next).toMatchObject({ state: 'retry_scheduled', provider: 'eum' });
    expect(plan.record.reason).toBe('failover');
    expect(plan.record.detail).toContain('account_refused');
  });

  it('a timeout stays unknown with the primary named: reconciled there, never failed over', () => {
    const plan = planOutcome(sending(), { kind: 'ambiguous', code: TIMEOUT_CODE }, ctx('eum'));
    expect(plan.next).toMatchObject({ state: 'unknown', provider: 'twilio' });
    expect(plan.record.reason).toBe('provider_timeout');
  });

  it('property: whatever the outcome, a failover happens only for a cause, and never when there is no fallback', () => {
    const outcomeArb: fc.Arbitrary<ProviderOutcome> = fc.oneof(
      fc.record({ kind: fc.constant('accepted' as const), receiptId: fc.string({ minLength: 1 }) }),
      fc.record({
        kind: fc.constant('retryable' as const),
        code: fc.constantFrom(...Object.values(NotReached), 'twilio_503', 'twilio_429', 'batch_not_recorded'),
        throttled: fc.boolean(),
      }),
      fc.record({ kind: fc.constant('rejected' as const), code: fc.string(), permanent: fc.boolean() }),
      fc.record({ kind: fc.constant('operator_action_required' as const), code: fc.string() }),
      fc.record({
        kind: fc.constant('ambiguous' as const),
        code: fc.constantFrom(TIMEOUT_CODE, 'connection_reset'),
      }),
    );
    fc.assert(
      fc.property(outcomeArb, fc.boolean(), (outcome, withFallback) => {
        const plan = planOutcome(sending(), outcome, ctx(withFallback ? 'eum' : undefined));
        const failedOver = plan.record.reason === 'failover';
        expect(failedOver).toBe(withFallback && failoverCause(outcome) !== undefined);
        if (outcome.kind === 'ambiguous') expect(plan.next.state).toBe('unknown');
        if (failedOver) expect(plan.next.provider).toBe('eum');
      }),
      { numRuns: 300 },
    );
  });
});
