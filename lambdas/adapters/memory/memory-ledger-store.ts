import type { Channel } from '../../domain/channel.ts';
import { type Intent, inOpenIndex, isSameContent } from '../../domain/intent.ts';
import { isTerminal } from '../../domain/state-machine.ts';
import {
  type SuppressionRecord,
  type SuppressionState,
  type SuppressionTarget,
  supersedes,
  suppressionFactId,
} from '../../domain/suppression.ts';
import type { TransitionPlan } from '../../domain/transition.ts';
import type { SendBatch } from '../../ports/batch-records.port.ts';
import type { ReserveResult, TransitionResult } from '../../ports/intent-ledger.port.ts';
import type { KeyChecks } from '../../ports/key-checks.port.ts';
import type { LedgerStore } from '../../ports/ledger-store.port.ts';
import {
  countRefs,
  type OpenIntentCounts,
  type OpenIntentPage,
  type OpenIntentRef,
} from '../../ports/open-index.port.ts';
import type { FailedRef } from '../../ports/recent-failures.port.ts';
import type { SuppressionAppend, SuppressionHistory } from '../../ports/suppressions.port.ts';
import type { GateHold } from '../../ports/throttle-gate.port.ts';

const key = (noticeId: string, channel: Channel) => `${noticeId}|${channel}`;

/** What the DynamoDB store's open index projects (LedgerTable.openIndexProjection). */
function toRef(intent: Intent): OpenIntentRef {
  return {
    noticeId: intent.noticeId,
    channel: intent.channel,
    dueAt: intent.dueAt as number,
    createdAt: intent.createdAt,
    deadline: intent.deadline,
    state: intent.state,
    attempts: intent.attempts,
    ...(intent.escalatedAt !== undefined ? { escalatedAt: intent.escalatedAt } : {}),
    ...(intent.escalationPending ? { escalationPending: true } : {}),
    ...(intent.acceptedAt !== undefined ? { acceptedAt: intent.acceptedAt } : {}),
  };
}

/**
 * In-process ledger with the same conditional semantics as the DynamoDB adapter. For unit
 * tests of use cases only; the DynamoDB adapter is proven against DynamoDB Local.
 */
export class MemoryLedgerStore implements LedgerStore {
  readonly intents = new Map<string, Intent>();
  /** Per `channel|fingerprint`: the effective state and every record in append order. */
  readonly suppressions = new Map<
    string,
    { state: SuppressionState; records: SuppressionRecord[]; factIds: Set<string> }
  >();
  readonly gates = new Map<Channel, number>();
  /** Each closed gate's reason, beside its time in `gates`. */
  readonly gateReasons = new Map<Channel, string>();
  keyChecks: KeyChecks = {};

  async readGate(channel: Channel): Promise<number | undefined> {
    return this.gates.get(channel);
  }

  async readHold(channel: Channel): Promise<GateHold | undefined> {
    const untilMs = this.gates.get(channel);
    return untilMs === undefined ? undefined : { untilMs, reason: this.gateReasons.get(channel) ?? 'held' };
  }

  async closeGate(channel: Channel, untilMs: number, reason = 'held'): Promise<boolean> {
    if ((this.gates.get(channel) ?? 0) >= untilMs) return false;
    this.gates.set(channel, untilMs);
    this.gateReasons.set(channel, reason);
    return true;
  }

  readonly batches = new Map<string, SendBatch>();

  async recordBatch(batch: SendBatch): Promise<void> {
    if (this.batches.has(batch.id)) throw new Error(`batch ${batch.id} is already recorded`);
    this.batches.set(batch.id, structuredClone(batch));
  }

  async getBatch(id: string): Promise<SendBatch | undefined> {
    const batch = this.batches.get(id);
    return batch ? structuredClone(batch) : undefined;
  }

  async reserve(intent: Intent): Promise<ReserveResult> {
    const existing = this.intents.get(key(intent.noticeId, intent.channel));
    if (!existing) {
      this.intents.set(key(intent.noticeId, intent.channel), intent);
      return { kind: 'created', intent };
    }
    return isSameContent(existing, intent) ? { kind: 'duplicate', existing } : { kind: 'conflict', existing };
  }

  async reserveNotice(
    intents: readonly Intent[],
    visible?: (existing: Intent) => boolean,
  ): Promise<ReserveResult[]> {
    // No await between the checks and the sets: atomic for every caller of this store.
    const existing = intents.map((intent) => this.intents.get(key(intent.noticeId, intent.channel)));
    if (visible && existing.some((row) => row !== undefined && !visible(row))) {
      return intents.map((intent, i) => {
        const row = existing[i];
        if (!row) return { kind: 'skipped' };
        return isSameContent(row, intent)
          ? { kind: 'duplicate', existing: row }
          : { kind: 'conflict', existing: row };
      });
    }
    return Promise.all(intents.map((intent) => this.reserve(intent)));
  }

  /**
   * What TTL does to a terminal row HOT_RETENTION after it resolved: the row leaves the table
   * (its story stays in the archive). Refuses an unresolved row, which carries no TTL.
   */
  expire(noticeId: string, channel: Channel): Intent {
    const row = this.intents.get(key(noticeId, channel));
    if (!row || !isTerminal(row.state)) throw new Error(`${noticeId} ${channel}: no terminal row to expire`);
    this.intents.delete(key(noticeId, channel));
    return row;
  }

  async get(noticeId: string, channel: Channel): Promise<Intent | undefined> {
    return this.intents.get(key(noticeId, channel));
  }

  async getRows(
    keys: readonly { readonly noticeId: string; readonly channel: Channel }[],
  ): Promise<Intent[]> {
    return keys.flatMap((k) => this.intents.get(key(k.noticeId, k.channel)) ?? []);
  }

  /** The same list the DynamoDB store keeps apart, read from the rows themselves. */
  async listFailed(since: number, until: number, max: number): Promise<FailedRef[]> {
    const failed: FailedRef[] = [];
    for (const row of this.intents.values()) {
      if (row.state !== 'failed') continue;
      const failure = row.transitions.findLast((t) => t.to === 'failed' && t.from !== 'failed');
      if (!failure || failure.at < since || failure.at > until) continue;
      failed.push({
        noticeId: row.noticeId,
        channel: row.channel,
        failedAt: failure.at,
        createdAt: row.createdAt,
        deadline: row.deadline,
        attempts: row.attempts,
        reason: failure.reason,
      });
    }
    return failed.sort((a, b) => b.failedAt - a.failedAt || (a.noticeId < b.noticeId ? -1 : 1)).slice(0, max);
  }

  async getNotice(noticeId: string): Promise<Intent[]> {
    return [...this.intents.values()]
      .filter((intent) => intent.noticeId === noticeId)
      .sort((a, b) => a.channel.localeCompare(b.channel));
  }

  async apply(plan: TransitionPlan): Promise<TransitionResult> {
    const k = key(plan.next.noticeId, plan.next.channel);
    const current = this.intents.get(k);
    if (!current || current.state !== plan.expected.state || current.version !== plan.expected.version) {
      return { kind: 'stale', current };
    }
    this.intents.set(k, plan.next);
    return { kind: 'applied', intent: plan.next };
  }

  async defer(noticeId: string, channel: Channel, expectedVersion: number, dueAt: number): Promise<boolean> {
    const current = this.intents.get(key(noticeId, channel));
    if (!current || current.version !== expectedVersion || current.dueAt === undefined) return false;
    this.intents.set(key(noticeId, channel), { ...current, dueAt, watched: undefined });
    return true;
  }

  async settleEscalation(
    noticeId: string,
    channel: Channel,
    expectedVersion: number,
    options: { readonly keepOpen?: boolean; readonly dueAt?: number | undefined } = {},
  ): Promise<boolean> {
    const current = this.intents.get(key(noticeId, channel));
    if (!current || current.version !== expectedVersion || !current.escalationPending) return false;
    this.intents.set(key(noticeId, channel), {
      ...current,
      escalationPending: undefined,
      dueAt: options.dueAt ?? (options.keepOpen ? current.dueAt : undefined),
    });
    return true;
  }

  async checkKeys(mine: KeyChecks) {
    for (const field of ['fingerprint', 'envelope', 'keysFrom'] as const) {
      if (mine[field] !== undefined && this.keyChecks[field] === undefined) {
        this.keyChecks = { ...this.keyChecks, [field]: mine[field] };
      }
    }
    const recorded = this.keyChecks;
    const mismatched = (['fingerprint', 'envelope'] as const).filter(
      (field) => mine[field] !== undefined && recorded[field] !== mine[field],
    );
    return { recorded, mismatched };
  }

  private page(refs: OpenIntentRef[], options: { limit?: number; cursor?: string }): OpenIntentPage {
    const start = options.cursor ? Number(options.cursor) : 0;
    const limit = options.limit ?? 100;
    const items = refs.slice(start, start + limit);
    return { items, cursor: start + limit < refs.length ? String(start + limit) : undefined };
  }

  async listDue(now: number, options: { limit?: number; cursor?: string } = {}): Promise<OpenIntentPage> {
    const refs = [...this.intents.values()]
      .filter((intent) => inOpenIndex(intent) && (intent.dueAt as number) <= now)
      .map(toRef)
      .sort((a, b) => a.dueAt - b.dueAt);
    return this.page(refs, options);
  }

  async listOpen(options: { limit?: number; cursor?: string } = {}): Promise<OpenIntentPage> {
    const refs = [...this.intents.values()].filter(inOpenIndex).map(toRef);
    return this.page(refs, options);
  }

  async countOpen(): Promise<OpenIntentCounts> {
    return countRefs([...this.intents.values()].filter(inOpenIndex).map(toRef));
  }

  async getSuppression(channel: Channel, fingerprint: string): Promise<SuppressionState | undefined> {
    return this.suppressions.get(`${channel}|${fingerprint}`)?.state;
  }

  async appendSuppression(target: SuppressionTarget, record: SuppressionRecord): Promise<SuppressionAppend> {
    const key = `${target.channel}|${target.fingerprint}`;
    const entry = this.suppressions.get(key);
    const id = suppressionFactId(record);
    if (entry?.factIds.has(id)) return { state: entry.state, appended: false };
    const state = supersedes(record, entry?.state.latest)
      ? { channel: target.channel, fingerprint: target.fingerprint, masked: target.masked, latest: record }
      : (entry?.state as SuppressionState);
    const records = [...(entry?.records ?? []), record];
    this.suppressions.set(key, { state, records, factIds: new Set([...(entry?.factIds ?? []), id]) });
    return { state, appended: true };
  }

  async getSuppressionHistory(
    channel: Channel,
    fingerprint: string,
    options: { limit?: number } = {},
  ): Promise<SuppressionHistory | undefined> {
    const entry = this.suppressions.get(`${channel}|${fingerprint}`);
    if (!entry) return undefined;
    const limit = options.limit ?? 100;
    // Time order, ties by fact id: the order the DynamoDB store's sort keys give.
    const ordered = entry.records
      .map((record) => ({ record, id: suppressionFactId(record) }))
      .sort((a, b) => a.record.at - b.record.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map(({ record }) => record);
    return {
      state: entry.state,
      records: ordered.slice(-limit),
      truncated: ordered.length > limit,
    };
  }
}
