import type { Channel } from '../domain/channel.ts';
import type { Intent } from '../domain/intent.ts';
import {
  decideAfterLookup,
  decideReconcile,
  type LookupVerdict,
  type ReconcileContext,
  type UnknownPolicy,
} from '../domain/reconcile.ts';
import { renderEmail, renderSms } from '../domain/template.ts';
import type { OpenIntentRef } from '../ports/ledger-store.port.ts';
import type { ProviderLookup } from '../ports/provider-lookup.port.ts';
import { correlationId } from './deliver-intent.ts';
import type { Dependencies } from './dependencies.ts';

export interface ReconcilerDependencies extends Dependencies {
  readonly lookups: Readonly<Partial<Record<Channel, ProviderLookup>>>;
  readonly unknownGraceMs: number;
  readonly unknownPolicy: UnknownPolicy;
  /** How soon an undecided `unknown` row is asked about again (`RECONCILE_INTERVAL_MS`). */
  readonly recheckMs: number;
  /** Upper bound of due rows handled per run, so one run stays within a Lambda timeout. */
  readonly maxRowsPerRun?: number;
}

export interface ReconcileReport {
  readonly due: number;
  readonly actions: Record<string, number>;
  /** Gauges over every open row, read from the sparse index only. */
  readonly openByState: Record<string, number>;
  readonly oldestUnresolvedAgeSeconds: number;
  readonly escalations: number;
}

const CONCURRENCY = 8;

async function mapLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const item = items[next++] as T;
        await fn(item);
      }
    }),
  );
}

async function lookupUnknown(row: Intent, deps: ReconcilerDependencies): Promise<LookupVerdict> {
  const lookup = deps.lookups[row.channel];
  if (!lookup) return { kind: 'undecidable', detail: `no lookup for ${row.channel}` };
  if (!row.envelope) return { kind: 'undecidable', detail: 'envelope gone' };
  const template = deps.catalog.lookup(row.templateId, row.templateVersion);
  if (!template) return { kind: 'undecidable', detail: 'template missing' };
  try {
    const envelope = await deps.sealer.open(row.envelope, { noticeId: row.noticeId, channel: row.channel });
    const content =
      row.channel === 'sms'
        ? renderSms(template, envelope.variables).text
        : renderEmail(template, envelope.variables).subject;
    const claimRecord = [...row.transitions].reverse().find((t) => t.to === 'sending');
    return await lookup.lookup({
      correlationId: correlationId(row),
      destination: envelope.destination,
      content,
      attemptStartedAt: claimRecord?.at ?? row.createdAt,
      attemptEndedAt: row.transitions[row.transitions.length - 1]?.at ?? row.createdAt,
      receiptId: row.providerReceiptId,
    });
  } catch (error) {
    return { kind: 'undecidable', detail: `lookup failed: ${error instanceof Error ? error.name : 'error'}` };
  }
}

/**
 * One reconciler run. Primary course, over the open-intent index only (never a Scan):
 *  1. list due rows; per row read it (consistent) and decide:
 *     sending past lease → unknown; unknown → ask the provider (found → accepted, provably
 *     absent after grace → retry, undecidable → recheck or policy); reserved / retry overdue →
 *     re-enqueue; past deadline → failed + escalation;
 *  2. list every open row for the gauges: counts per state and the oldest unresolved age.
 * Each change is the same conditional write the workers use, so a race with a worker or a
 * second reconciler costs one refused write, never a wrong state.
 */
export async function reconcile(deps: ReconcilerDependencies): Promise<ReconcileReport> {
  const now = deps.clock.now();
  const ctx: ReconcileContext = {
    now,
    timing: deps.timing,
    unknownGraceMs: deps.unknownGraceMs,
    unknownPolicy: deps.unknownPolicy,
    recheckMs: deps.recheckMs,
    policy: deps.retryPolicy,
    random: deps.random,
  };
  const actions: Record<string, number> = {};
  const count = (name: string) => {
    actions[name] = (actions[name] ?? 0) + 1;
  };
  let escalations = 0;

  const due: OpenIntentRef[] = [];
  const maxRows = deps.maxRowsPerRun ?? 1000;
  let cursor: string | undefined;
  do {
    const page = await deps.store.listDue(now, {
      limit: Math.min(200, maxRows - due.length),
      ...(cursor ? { cursor } : {}),
    });
    due.push(...page.items);
    cursor = page.cursor;
  } while (cursor && due.length < maxRows);

  await mapLimited(due, CONCURRENCY, async (ref) => {
    const row = await deps.store.get(ref.noticeId, ref.channel);
    if (!row) return;
    let action = decideReconcile(row, ctx);
    if (action.kind === 'lookup') {
      const verdict = await lookupUnknown(row, deps);
      count(`lookup_${verdict.kind}`);
      const after = decideAfterLookup(row, verdict, ctx);
      if (after.kind === 'recheck') {
        await deps.store.defer(row.noticeId, row.channel, row.version, after.at);
        count('recheck');
        return;
      }
      action = after;
    }
    switch (action.kind) {
      case 'none':
        count('none');
        return;
      case 'reenqueue':
        await deps.queue.enqueue([{ noticeId: row.noticeId, channel: row.channel }]);
        await deps.store.defer(row.noticeId, row.channel, row.version, action.nextDueAt);
        count(`reenqueue_${row.state}`);
        return;
      case 'transition': {
        const result = await deps.store.apply(action.plan);
        if (result.kind === 'stale') {
          count('raced');
          return;
        }
        count(`${action.plan.record.from}_to_${action.plan.record.to}`);
        const next = result.intent;
        if (next.state === 'retry_scheduled' && next.nextAttemptAt !== undefined) {
          await deps.scheduler
            .scheduleAttempt(next, next.attempts + 1, next.nextAttemptAt)
            .catch(() => undefined);
        }
        if (action.escalate) {
          escalations += 1;
          await deps.escalations
            .publish({
              noticeId: next.noticeId,
              channel: next.channel,
              reason: action.plan.record.reason,
              state: next.state,
              at: now,
              detail: action.plan.record.detail,
            })
            .catch(() => undefined);
        }
        return;
      }
    }
  });

  const counts = await deps.store.countOpen();
  const oldest = counts.oldestCreatedAt ?? now;
  return {
    due: due.length,
    actions,
    openByState: { ...counts.byState },
    oldestUnresolvedAgeSeconds: Math.max(0, Math.floor((now - oldest) / 1000)),
    escalations,
  };
}
