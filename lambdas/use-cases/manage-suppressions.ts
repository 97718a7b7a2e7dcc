import type { Channel } from '../domain/channel.ts';
import { normalizeDestination, resolveDestination } from '../domain/destination.ts';
import {
  isSuppressed,
  SuppressionAction,
  type SuppressionRecord,
  SuppressionSource,
  type SuppressionState,
  type SuppressionTarget,
} from '../domain/suppression.ts';
import { suppressionSyncContext } from '../ports/intent-queue.port.ts';
import type { SuppressionHistory } from '../ports/suppressions.port.ts';
import type { SuppressionDependencies } from './dependencies.ts';

/** The reason a lift is recorded with when the operator gives none. */
export const LIFT_REASON = 'lifted_by_operator';

/** Throws `InvalidDestinationError` for a destination providers would not take. */
function targetOf(
  channel: Channel,
  rawDestination: string,
  deps: SuppressionDependencies,
): SuppressionTarget {
  const { fingerprint, masked } = resolveDestination(deps.fingerprintKey, channel, rawDestination);
  return { channel, fingerprint, masked };
}

export interface OperatorAct {
  readonly reason: string;
  /** The operator's principal (IAM), or on the local stack the body's actor, else `local` (edge `operatorActor`). */
  readonly actor: string;
}

/** The effective state and its history (newest 100 records), or undefined if none was ever recorded. */
export async function getSuppression(
  channel: Channel,
  rawDestination: string,
  deps: SuppressionDependencies,
): Promise<SuppressionHistory | undefined> {
  const { fingerprint } = targetOf(channel, rawDestination, deps);
  return deps.store.getSuppressionHistory(channel, fingerprint);
}

/**
 * An operator acts on the state they see, so their record is stamped no earlier than its latest
 * record (a provider's clock can run ahead of ours): it always becomes the effective one.
 */
function operatorRecord(
  action: SuppressionRecord['action'],
  act: OperatorAct,
  before: SuppressionState | undefined,
  deps: SuppressionDependencies,
): SuppressionRecord {
  const at = Math.max(deps.clock.now(), before?.latest.at ?? 0);
  return { action, reason: act.reason, source: SuppressionSource.operator, actor: act.actor, at };
}

/**
 * An operator suppresses a destination: one record appended beside whatever providers or other
 * operators recorded before (nothing is overwritten). `turnedOn` says whether the destination
 * was not suppressed until now.
 */
export async function suppress(
  channel: Channel,
  rawDestination: string,
  act: OperatorAct,
  deps: SuppressionDependencies,
): Promise<{ state: SuppressionState; turnedOn: boolean }> {
  const target = targetOf(channel, rawDestination, deps);
  const before = await deps.store.getSuppression(channel, target.fingerprint);
  const { state } = await deps.store.appendSuppression(
    target,
    operatorRecord(SuppressionAction.suppress, act, before, deps),
  );
  await mirrorToProvider(target, rawDestination, act.reason, deps);
  return { state, turnedOn: !isSuppressed(before) };
}

/**
 * The channel provider's own list (an opt-out list, a gateway's suppression list) is told too,
 * so the two lists agree: a suppression sync on the channel queue, whose sender holds the
 * provider's credentials and mirrors it if its provider keeps such a list (nothing otherwise).
 * Lifts are not mirrored: a provider's list also holds what recipients said themselves (STOP),
 * which an operator's lift must not undo.
 */
async function mirrorToProvider(
  target: SuppressionTarget,
  rawDestination: string,
  reason: string,
  deps: SuppressionDependencies,
): Promise<void> {
  const { queue, sealer } = deps;
  if (!queue?.enqueueSuppressionSync || !sealer) return;
  const destination = normalizeDestination(target.channel, rawDestination);
  const sealed = await sealer.seal({ destination, variables: {} }, suppressionSyncContext(target));
  await queue.enqueueSuppressionSync({
    channel: target.channel,
    fingerprint: target.fingerprint,
    reason,
    sealed,
  });
}

/**
 * An operator lifts a suppression: a `lift` record is appended (the history keeps what was
 * lifted). `false`, and nothing recorded, when the destination is not suppressed.
 */
export async function lift(
  channel: Channel,
  rawDestination: string,
  act: OperatorAct,
  deps: SuppressionDependencies,
): Promise<boolean> {
  const target = targetOf(channel, rawDestination, deps);
  const before = await deps.store.getSuppression(channel, target.fingerprint);
  if (!isSuppressed(before)) return false;
  await deps.store.appendSuppression(target, operatorRecord(SuppressionAction.lift, act, before, deps));
  return true;
}
