import { describe, expect, it } from 'vitest';
import { estimateSendAt, isDeadlineAtRisk } from '../../lambdas/domain/deadline-risk.ts';

describe('deadline risk: the estimate of when a channel is sent', () => {
  const options = { leadMs: 0, pipelineMs: 100 };

  it('counts the references of its lane and the higher lanes at the rate', () => {
    const backlog = { ratePerSecond: 25, waiting: { critical: 5, standard: 3_000, bulk: 10_000 } };
    expect(estimateSendAt(backlog, 'critical', 0, options)).toBe(200 + 100);
    expect(estimateSendAt(backlog, 'standard', 0, options)).toBe(120_200 + 100);
    expect(estimateSendAt(backlog, 'bulk', 0, options)).toBe(520_200 + 100);
  });

  it('adds what the budget has booked beyond the lane lead, and the items ahead in the same batch', () => {
    const backlog = { ratePerSecond: 10, waiting: {}, clockMs: 3_000 };
    expect(estimateSendAt(backlog, 'bulk', 1_000, { ...options, aheadExtra: 4 })).toBe(
      1_000 + 2_000 + 400 + 100,
    );
    expect(estimateSendAt(backlog, 'critical', 1_000, { leadMs: 500, pipelineMs: 0 })).toBe(2_500);
    // A clock in the past books nothing ahead.
    expect(estimateSendAt({ ...backlog, clockMs: 0 }, 'bulk', 1_000, { leadMs: 0, pipelineMs: 0 })).toBe(
      1_000,
    );
  });

  it('is at risk only when the estimate passes the deadline', () => {
    expect(isDeadlineAtRisk(10_001, 10_000)).toBe(true);
    expect(isDeadlineAtRisk(10_000, 10_000)).toBe(false);
  });
});
