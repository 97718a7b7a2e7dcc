/**
 * The naive dispatcher's policy, shared by the live baseline (naive-dispatcher.ts) and the scale
 * simulation: what a typical "SQS → Lambda → provider SDK" consumer does.
 *
 * - each worker retries its own failure in place with a fixed backoff, up to a cap
 *   (1 + 3 retries, the AWS SDK's standard `maxAttempts` plus the original call);
 * - "SDK retries on": 429, 5xx, timeouts and resets are all retried blindly — an ambiguous
 *   send is resent, which is where duplicates come from when a provider times out;
 * - no shared gate and no pacing: every worker discovers the 429 on its own;
 * - when the cap is reached the record is reported as a batch item failure and SQS redelivers
 *   it after the visibility timeout (30 s, the SQS default); after 5 receives the redrive
 *   policy moves it to the DLQ, where nobody sends it.
 */
import type { ProviderOutcome } from '../../lambdas/domain/outcome.ts';

export const NAIVE_POLICY = {
  fixedBackoffMs: 1_000,
  attemptsPerReceive: 4,
  visibilityTimeoutSeconds: 30,
  maxReceiveCount: 5,
} as const;

export type NaiveDecision =
  | { readonly kind: 'done' }
  /** Permanently refused: dropped (logged), counted as not delivered. */
  | { readonly kind: 'drop' }
  | { readonly kind: 'retry'; readonly afterMs: number }
  /** Give the record back to SQS (batch item failure). */
  | { readonly kind: 'fail' };

/** `attempt` counts calls made in this receive, the one that produced `outcome` included. */
export function naiveDecision(outcome: ProviderOutcome, attempt: number): NaiveDecision {
  if (outcome.kind === 'accepted') return { kind: 'done' };
  if (outcome.kind === 'rejected' && outcome.permanent) return { kind: 'drop' };
  if (attempt >= NAIVE_POLICY.attemptsPerReceive) return { kind: 'fail' };
  return { kind: 'retry', afterMs: NAIVE_POLICY.fixedBackoffMs };
}
