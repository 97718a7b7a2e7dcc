import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { newBucket, onAccepted, onThrottled, refill, reserve, take } from '../../lambdas/domain/pacing.ts';

describe('token bucket pacing', () => {
  it('never admits more than rate·T + one second of burst in any run', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 300 }),
        (rate, gaps) => {
          let state = newBucket(rate, 0);
          let now = 0;
          let admitted = 0;
          for (const gap of gaps) {
            now += gap;
            const result = take(state, now);
            state = result.state;
            if (result.waitMs === 0) admitted += 1;
            expect(state.tokens).toBeLessThanOrEqual(Math.max(1, rate));
          }
          expect(admitted).toBeLessThanOrEqual(Math.floor((rate * now) / 1000) + Math.max(1, rate));
        },
      ),
    );
  });

  it('reserve queues callers one token apart', () => {
    let state = newBucket(10, 0);
    const waits: number[] = [];
    for (let i = 0; i < 13; i++) {
      const r = reserve(state, 0);
      state = r.state;
      waits.push(r.waitMs);
    }
    expect(waits.slice(0, 10)).toEqual(Array(10).fill(0));
    expect(waits.slice(10)).toEqual([100, 200, 300]);
  });

  it('a throttle halves the pace (not below a tenth) and empties the bucket; successes climb back to the ceiling', () => {
    let state = newBucket(20, 0);
    state = onThrottled(state, 0);
    expect(state.rate).toBe(10);
    expect(state.tokens).toBeLessThanOrEqual(0);
    for (let i = 0; i < 10; i++) state = onThrottled(state, 0);
    expect(state.rate).toBe(2);
    for (let i = 0; i < 1000; i++) state = onAccepted(state);
    expect(state.rate).toBe(20);
    expect(refill(state, 10_000).tokens).toBe(20);
  });
});
