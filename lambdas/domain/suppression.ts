import { createHash } from 'node:crypto';
import type { Channel } from './channel.ts';
import { canonicalJson } from './identity.ts';

/**
 * The suppression list as a history (docs/table-design.md): every fact about a destination on a
 * channel is appended — a provider's hard bounce or complaint, an operator's suppression or lift
 * — and never rewritten. The effective state is the latest fact by its own time; of two with the
 * same time, the later appended. So an operator's PUT stands beside a provider's bounce instead
 * of replacing it, a lift is a record of its own, and a provider event delivered twice or late
 * (EventBridge and status callbacks are at-least-once) cannot undo a later lift.
 */
export const SuppressionAction = { suppress: 'suppress', lift: 'lift' } as const;
export type SuppressionAction = (typeof SuppressionAction)[keyof typeof SuppressionAction];

export const SuppressionSource = { provider: 'provider', operator: 'operator' } as const;
export type SuppressionSource = (typeof SuppressionSource)[keyof typeof SuppressionSource];

export interface SuppressionRecord {
  readonly action: SuppressionAction;
  /** snake_case code: `hard_bounce`, `complaint`, `patient_request`, `operator` … */
  readonly reason: string;
  readonly source: SuppressionSource;
  /** Who stated it: the provider (its module id) or the operator's principal. */
  readonly actor: string;
  /** Epoch ms of the fact (a provider's own event time, or when the operator acted). */
  readonly at: number;
  /** The provider's code (an error code, a bounce type): a code, never free text. */
  readonly code?: string | undefined;
}

/** Where a record belongs: the destination by fingerprint, and its masked form for operators. */
export interface SuppressionTarget {
  readonly channel: Channel;
  readonly fingerprint: string;
  readonly masked: string;
}

/** The effective state: the target and its latest record. */
export interface SuppressionState extends SuppressionTarget {
  readonly latest: SuppressionRecord;
}

export function isSuppressed(state: Pick<SuppressionState, 'latest'> | undefined): boolean {
  return state?.latest.action === SuppressionAction.suppress;
}

/** Whether `candidate` becomes the effective record over `current` (appended after it). */
export function supersedes(candidate: SuppressionRecord, current: SuppressionRecord | undefined): boolean {
  return current === undefined || candidate.at >= current.at;
}

/** Identifies a fact: the same fact reported twice (a redelivered bounce) is recorded once. */
export function suppressionFactId(record: SuppressionRecord): string {
  return createHash('sha256')
    .update(
      canonicalJson({
        a: record.action,
        r: record.reason,
        s: record.source,
        w: record.actor,
        t: record.at,
        c: record.code,
      }),
    )
    .digest('base64url')
    .slice(0, 16);
}
