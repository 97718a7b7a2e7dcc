/**
 * Crash points for the runbook (docs/architecture.md §7): "kill the worker immediately before the send,
 * immediately after the provider accepted, and immediately before the final commit".
 *
 * A kill -9 from outside cannot land between two lines of the sender; this can. When
 * `CRASH_POINT` is set, the local stack wraps the ports of its process-wide runtime (the
 * transports and the ledger store) so that the process SIGKILLs itself at that point for the
 * targeted intent. The use case (lambdas/use-cases/deliver.ts) is untouched: each point
 * is a port call it already makes.
 *
 *   before_send    at the transport's `send` (or `sendBatch`) entry, before any byte reaches the provider
 *   after_accept   after the transport returned `accepted`, before the outcome is written (for a
 *                  batch call: once the call answered, before any member's result is written)
 *   before_commit  at the store's `apply` of the plan that takes the row out of `sending`
 *                  (the attempt's outcome), before the write
 *
 * and two in the archiver (docs/archive.md), where a batch is written in steps:
 *
 *   archive_after_facts         a `facts/` object written, before the `rows/` object
 *   archive_before_key_records  both objects written, before the key records
 *
 * `CRASH_POINT_NOTICE` (a noticeId) and `CRASH_POINT_CHANNEL` (`email`|`sms`) narrow a sender's
 * target; without them the first intent to reach the point brings the process down (an archive
 * point: the first batch). Local stack only: nothing in lambdas/ reads these variables.
 */
import { writeSync } from 'node:fs';
import { Archive } from '../lambdas/contract/archive.ts';
import type { Channel } from '../lambdas/domain/channel.ts';
import { parseCorrelationId } from '../lambdas/domain/identity.ts';
import type { ProviderOutcome } from '../lambdas/domain/outcome.ts';
import type { TransitionPlan } from '../lambdas/domain/transition.ts';
import type { IntentTransitions } from '../lambdas/ports/intent-ledger.port.ts';
import type { BatchSending, Transport } from '../lambdas/ports/transport.port.ts';
import type { ArchiverDependencies } from '../lambdas/use-cases/archive-changes.ts';
import type { SenderDependencies } from '../lambdas/use-cases/dependencies.ts';

/** The sender's points (the runbook's three). */
export const CRASH_POINTS = ['before_send', 'after_accept', 'before_commit'] as const;
/** The archiver's points. */
export const ARCHIVE_CRASH_POINTS = ['archive_after_facts', 'archive_before_key_records'] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number] | (typeof ARCHIVE_CRASH_POINTS)[number];
const ALL_POINTS: readonly string[] = [...CRASH_POINTS, ...ARCHIVE_CRASH_POINTS];

export interface CrashPointSpec {
  readonly point: CrashPoint;
  readonly noticeId?: string | undefined;
  readonly channel?: Channel | undefined;
}

/** Ends the process the way `kill -9` does: no handler, no flush, no graceful stop. */
export type Crash = (line: string) => never;

/**
 * The spec from the environment, or undefined when `CRASH_POINT` is unset. A value that names
 * no point is an error, so a typo cannot quietly run a test without its crash.
 */
export function readCrashPoint(
  env: Readonly<Record<string, string | undefined>>,
): CrashPointSpec | undefined {
  const point = env.CRASH_POINT?.trim();
  if (!point) return undefined;
  if (!ALL_POINTS.includes(point)) {
    throw new Error(`CRASH_POINT must be one of ${ALL_POINTS.join(', ')}; got "${point}"`);
  }
  const channel = env.CRASH_POINT_CHANNEL?.trim() || undefined;
  if (channel !== undefined && channel !== 'email' && channel !== 'sms') {
    throw new Error(`CRASH_POINT_CHANNEL must be email or sms; got "${channel}"`);
  }
  return {
    point: point as CrashPoint,
    noticeId: env.CRASH_POINT_NOTICE?.trim() || undefined,
    channel,
  };
}

export function describeCrashPoint(spec: CrashPointSpec): string {
  return `${spec.point} for ${spec.noticeId ?? 'any notice'}${spec.channel ? ` (${spec.channel})` : ''}`;
}

/**
 * SIGKILL to this process. The line goes out first with a synchronous write, because nothing
 * written asynchronously survives the signal; tests read it to know the crash happened where
 * they aimed it and not somewhere else.
 */
export const sigkillSelf: Crash = (line) => {
  writeSync(2, `[local] ${line}\n`);
  process.kill(process.pid, 'SIGKILL');
  // A signal a process sends itself is delivered before kill() returns; this is only for the
  // type checker and a platform that would not honour that.
  process.abort();
};

/**
 * Wraps, in place, the ports of a sender's runtime (lambdas/wiring/sender.ts builds one per
 * channel and process), so that the worker's every call goes through the crash point. Called
 * for both channels' senders before any handler runs.
 */
export function installCrashPoints(
  runtime: { readonly deps: Pick<SenderDependencies, 'store' | 'transports'> },
  spec: CrashPointSpec,
  crash: Crash = sigkillSelf,
): void {
  if (spec.point !== 'before_send' && spec.point !== 'after_accept' && spec.point !== 'before_commit') return;
  const targets = (noticeId: string, channel: Channel) =>
    (spec.noticeId === undefined || spec.noticeId === noticeId) &&
    (spec.channel === undefined || spec.channel === channel);
  const die = (noticeId: string, channel: Channel): never =>
    crash(`crash point ${spec.point} reached for ${noticeId}-${channel}: SIGKILL`);

  if (spec.point === 'before_commit') {
    wrapStore(runtime.deps.store, (plan) => {
      if (isAttemptOutcome(plan) && targets(plan.next.noticeId, plan.next.channel)) {
        die(plan.next.noticeId, plan.next.channel);
      }
    });
    return;
  }
  const point = spec.point;
  const check = (correlationId: string, outcome: ProviderOutcome | undefined) => {
    const ref = parseCorrelationId(correlationId);
    if (ref === undefined || !targets(ref.noticeId, ref.channel)) return;
    if (point === 'before_send' || outcome?.kind === 'accepted') die(ref.noticeId, ref.channel);
  };
  const { email, sms } = runtime.deps.transports;
  if (email) wrapTransport(email, point, check);
  if (sms) wrapTransport(sms, point, check);
}

/**
 * Wraps, in place, the archiver's runtime (lambdas/wiring/archive.ts builds one per process), so
 * that its batch dies between two of its writes: after a `facts/` object, or before the key
 * records. The use case (lambdas/use-cases/archive-changes.ts) is untouched.
 */
export function installArchiveCrashPoints(
  deps: Pick<ArchiverDependencies, 'store' | 'keyRecords'>,
  spec: CrashPointSpec,
  crash: Crash = sigkillSelf,
): void {
  if (spec.point === 'archive_after_facts') {
    const putIfAbsent = deps.store.putIfAbsent.bind(deps.store);
    deps.store.putIfAbsent = async (key, lines, lastSequence) => {
      const outcome = await putIfAbsent(key, lines, lastSequence);
      if (outcome === 'written' && key.startsWith(Archive.factsPrefix))
        crash(`crash point ${spec.point} reached for ${key}: SIGKILL`);
      return outcome;
    };
  } else if (spec.point === 'archive_before_key_records') {
    const writeKeyRecords = deps.keyRecords.writeKeyRecords.bind(deps.keyRecords);
    deps.keyRecords.writeKeyRecords = async (writes) => {
      const first = writes[0]?.record;
      if (first) crash(`crash point ${spec.point} reached for ${first.noticeId}-${first.channel}: SIGKILL`);
      return writeKeyRecords(writes);
    };
  }
}

/**
 * The write that records what the attempt's provider call returned: it leaves `sending`. The
 * reconciler's lease expiry leaves `sending` too, but it is no worker's commit.
 */
function isAttemptOutcome(plan: TransitionPlan): boolean {
  return plan.expected.state === 'sending' && plan.record.reason !== 'lease_expired';
}

function wrapStore(store: IntentTransitions, before: (plan: TransitionPlan) => void): void {
  const apply = store.apply.bind(store);
  store.apply = async (plan) => {
    before(plan);
    return apply(plan);
  };
}

function wrapTransport<M extends { readonly correlationId: string }>(
  transport: Transport<M> & Partial<BatchSending<M>>,
  point: 'before_send' | 'after_accept',
  check: (correlationId: string, outcome: ProviderOutcome | undefined) => void,
): void {
  const send = transport.send.bind(transport);
  transport.send = async (message) => {
    if (point === 'before_send') check(message.correlationId, undefined);
    const outcome = await send(message);
    if (point === 'after_accept') check(message.correlationId, outcome);
    return outcome;
  };
  const sendBatch = transport.sendBatch?.bind(transport);
  if (!sendBatch) return;
  transport.sendBatch = async (batch) => {
    if (point === 'before_send') for (const m of batch.messages) check(m.correlationId, undefined);
    const outcomes = await sendBatch(batch);
    if (point === 'after_accept') {
      batch.messages.forEach((m, i) => {
        check(m.correlationId, outcomes[i]);
      });
    }
    return outcomes;
  };
}
