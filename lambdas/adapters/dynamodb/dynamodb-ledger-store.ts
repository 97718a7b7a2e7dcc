import { createHash, randomInt, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ConditionalCheckFailedException,
  type ConsumedCapacity,
  type DynamoDBClient,
  TransactionCanceledException,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { LedgerTable } from '../../contract/ledger-table.ts';
import type { Channel } from '../../domain/channel.ts';
import type { Intent, TransitionRecord } from '../../domain/intent.ts';
import { isSameContent, MUTABLE_INTENT_FIELDS, type MutableIntentField } from '../../domain/intent.ts';
import type { Priority } from '../../domain/priority.ts';
import { type IntentState, isTerminal } from '../../domain/state-machine.ts';
import {
  SuppressionAction,
  type SuppressionRecord,
  SuppressionSource,
  type SuppressionState,
  type SuppressionTarget,
  supersedes,
  suppressionFactId,
} from '../../domain/suppression.ts';
import type { TransitionPlan } from '../../domain/transition.ts';
import {
  countRefs,
  type KeyChecks,
  type LedgerStore,
  type OpenIntentCounts,
  type OpenIntentPage,
  type OpenIntentRef,
  type ReserveResult,
  type SendBatch,
  type SuppressionAppend,
  type SuppressionHistory,
  type TransitionResult,
} from '../../ports/ledger-store.port.ts';

export interface DynamoDbLedgerStoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /**
   * How many partitions the open index is spread over. One GSI partition key takes about
   * 1000 writes/s; every unresolved write lands on the index, so a busy ledger needs several.
   * @default 4
   */
  readonly openShards?: number;
  /** Terminal rows get a TTL this far in the future; undefined keeps them forever. */
  readonly retentionMs?: number;
  /** Called with the capacity each request consumed (benchmarks, cost reports). */
  readonly onConsumedCapacity?: (operation: string, capacity: ConsumedCapacity | undefined) => void;
}

/** Stored form of a transition record: short keys, since every write pays per started KB. */
interface StoredRecord {
  n: number;
  at: number;
  fr?: string;
  to: string;
  r: string;
  a?: number;
  d?: string;
  /** actor: only on records written by a person or a business caller. */
  by?: string;
}

/** Intent fields stored under a shorter attribute name (every write pays per started KB). */
const STORED_NAMES: Partial<Record<MutableIntentField, string>> = {
  escalatedAt: 'escAt',
  acceptedAt: 'accAt',
};
const storedName = (field: MutableIntentField): string => STORED_NAMES[field] ?? field;

const intentPk = (noticeId: string) => `N#${noticeId}`;
const channelSk = (channel: Channel) => `C#${channel}`;
const suppressionPk = (channel: Channel, fingerprint: string) => `S#${channel}#${fingerprint}`;
const SUPPRESSION_SK = 'S';
/** History records sort by time, then by fact id (which also makes a repeated fact one key). */
const suppressionRecordSk = (record: SuppressionRecord) =>
  `H#${String(record.at).padStart(15, '0')}#${suppressionFactId(record)}`;
/** Optimistic-concurrency retries of an append racing another append on the same destination. */
const MAX_SUPPRESSION_RACES = 8;
const gatePk = (channel: Channel) => `G#${channel}`;
const GATE_SK = 'G';
const batchPk = (id: string) => `B#${id}`;
const BATCH_SK = 'B';
const KEY_CHECK_PK = 'K#keys';
const KEY_CHECK_SK = 'K';

function toStoredRecord(record: TransitionRecord): StoredRecord {
  return {
    n: record.seq,
    at: record.at,
    ...(record.from !== null ? { fr: record.from } : {}),
    to: record.to,
    r: record.reason,
    ...(record.attempt !== undefined ? { a: record.attempt } : {}),
    ...(record.detail !== undefined ? { d: record.detail } : {}),
    ...(record.actor !== undefined ? { by: record.actor } : {}),
  };
}

function fromStoredRecord(stored: StoredRecord): TransitionRecord {
  return {
    seq: stored.n,
    at: stored.at,
    from: (stored.fr ?? null) as IntentState | null,
    to: stored.to as IntentState,
    reason: stored.r as TransitionRecord['reason'],
    ...(stored.a !== undefined ? { attempt: stored.a } : {}),
    ...(stored.d !== undefined ? { detail: stored.d } : {}),
    ...(stored.by !== undefined ? { actor: stored.by } : {}),
  };
}

type Item = Record<string, unknown>;

function recordToItem(record: SuppressionRecord): Item {
  return {
    action: record.action,
    reason: record.reason,
    source: record.source,
    actor: record.actor,
    at: record.at,
    code: record.code,
  };
}

function recordFromItem(item: Item): SuppressionRecord {
  return {
    action: item.action as SuppressionRecord['action'],
    reason: item.reason as string,
    source: item.source as SuppressionRecord['source'],
    actor: item.actor as string,
    at: item.at as number,
    ...(item.code !== undefined ? { code: item.code as string } : {}),
  };
}

/**
 * The effective state from the `S` item. An item written before the history existed has
 * `{reason, source, createdAt, detail}` and always meant "suppressed"; its `source` was the
 * provider's name or `operator`, its `detail` a provider code or an operator's free text (not
 * carried over).
 */
function suppressionStateFromItem(channel: Channel, fingerprint: string, item: Item): SuppressionState {
  const legacy = item.action === undefined;
  const latest: SuppressionRecord = legacy
    ? {
        action: SuppressionAction.suppress,
        reason: item.reason as string,
        source: item.source === 'operator' ? SuppressionSource.operator : SuppressionSource.provider,
        actor: item.source as string,
        at: item.createdAt as number,
        ...(item.source !== 'operator' && item.detail !== undefined ? { code: item.detail as string } : {}),
      }
    : recordFromItem(item);
  return { channel, fingerprint, masked: item.masked as string, latest };
}

/** Concurrent transactions on one notice's rows; past this many in a row, the caller gets the error. */
const MAX_TRANSACTION_CONFLICTS = 8;
/** Cancellation codes worth another try; anything else (validation, size limits) is a bug to surface. */
const RETRYABLE_CANCELLATIONS = new Set(['None', 'TransactionConflict', 'ThrottlingError']);

function intentFromItem(item: Item): Intent {
  const sms =
    item.smsEncoding !== undefined
      ? {
          encoding: item.smsEncoding as 'GSM-7' | 'UCS-2',
          segments: item.smsSegments as number,
          characters: item.smsCharacters as number,
        }
      : undefined;
  return {
    noticeId: (item.pk as string).slice(2),
    channel: (item.sk as string).slice(2) as Channel,
    eventId: item.eventId as string,
    eventType: item.eventType as string,
    recipientId: item.recipientId as string,
    templateId: item.templateId as string,
    templateVersion: item.templateVersion as string,
    contentDigest: item.contentDigest as string,
    variableDigests: item.varDigests as Record<string, string> | undefined,
    destination: { fingerprint: item.destFingerprint as string, masked: item.destMasked as string },
    createdAt: item.createdAt as number,
    deadline: item.deadline as number,
    sms,
    ...(item.priority !== undefined ? { priority: item.priority as Priority } : {}),
    state: item.state as IntentState,
    version: item.version as number,
    attempts: item.attempts as number,
    provider: item.provider as string | undefined,
    providerReceiptId: item.providerReceiptId as string | undefined,
    nextAttemptAt: item.nextAttemptAt as number | undefined,
    leaseOwner: item.leaseOwner as string | undefined,
    leaseExpiresAt: item.leaseExpiresAt as number | undefined,
    batch: item.batch as string | undefined,
    dueAt: item.dueAt as number | undefined,
    envelope: item.envelope as string | undefined,
    escalationPending: item.escalationPending === true ? true : undefined,
    escalatedAt: item.escAt as number | undefined,
    acceptedAt: item.accAt as number | undefined,
    transitions: ((item.transitions as StoredRecord[] | undefined) ?? []).map(fromStoredRecord),
  };
}

/** An open-index item (keys and the projection of LedgerTable.openIndexProjection) as a ref. */
function refFromIndexItem(item: Item): OpenIntentRef {
  return {
    noticeId: (item.pk as string).slice(2),
    channel: (item.sk as string).slice(2) as Channel,
    dueAt: item.dueAt as number,
    createdAt: item.createdAt as number,
    deadline: item.deadline as number,
    state: item.state as IntentState,
    attempts: (item.attempts as number | undefined) ?? 0,
    ...(item.escAt !== undefined ? { escalatedAt: item.escAt as number } : {}),
    ...(item.escalationPending === true ? { escalationPending: true } : {}),
    ...(item.accAt !== undefined ? { acceptedAt: item.accAt as number } : {}),
  };
}

/**
 * DynamoDB implementation of the ledger. Every method is one request (listing pages aside):
 * reserve = conditional Put, apply/defer = conditional Update, get = GetItem.
 */
export class DynamoDbLedgerStore implements LedgerStore {
  private readonly doc: DynamoDBDocumentClient;
  private readonly tableName: string;
  private readonly openShards: number;
  private readonly retentionMs: number | undefined;
  private readonly onConsumedCapacity: DynamoDbLedgerStoreOptions['onConsumedCapacity'];

  constructor(options: DynamoDbLedgerStoreOptions) {
    this.doc = DynamoDBDocumentClient.from(options.client, {
      marshallOptions: { removeUndefinedValues: true },
    });
    this.tableName = options.tableName;
    this.openShards = options.openShards ?? 4;
    this.retentionMs = options.retentionMs;
    this.onConsumedCapacity = options.onConsumedCapacity;
  }

  private shardOf(noticeId: string): string {
    const bucket = createHash('sha256').update(noticeId).digest().readUInt32BE(0) % this.openShards;
    return `open#${bucket}`;
  }

  private meter(operation: string, capacity: ConsumedCapacity | undefined): void {
    this.onConsumedCapacity?.(operation, capacity);
  }

  private get capacityOption() {
    return this.onConsumedCapacity ? ({ ReturnConsumedCapacity: 'TOTAL' } as const) : {};
  }

  private itemFromIntent(intent: Intent): Item {
    return {
      pk: intentPk(intent.noticeId),
      sk: channelSk(intent.channel),
      eventId: intent.eventId,
      eventType: intent.eventType,
      recipientId: intent.recipientId,
      templateId: intent.templateId,
      templateVersion: intent.templateVersion,
      contentDigest: intent.contentDigest,
      // Short name: every write pays per started KB.
      varDigests: intent.variableDigests,
      destFingerprint: intent.destination.fingerprint,
      destMasked: intent.destination.masked,
      createdAt: intent.createdAt,
      deadline: intent.deadline,
      smsEncoding: intent.sms?.encoding,
      smsSegments: intent.sms?.segments,
      smsCharacters: intent.sms?.characters,
      priority: intent.priority,
      state: intent.state,
      version: intent.version,
      attempts: intent.attempts,
      provider: intent.provider,
      providerReceiptId: intent.providerReceiptId,
      nextAttemptAt: intent.nextAttemptAt,
      leaseOwner: intent.leaseOwner,
      leaseExpiresAt: intent.leaseExpiresAt,
      batch: intent.batch,
      dueAt: intent.dueAt,
      openShard: intent.dueAt !== undefined ? this.shardOf(intent.noticeId) : undefined,
      envelope: intent.envelope,
      escalationPending: intent.escalationPending ? true : undefined,
      // Short name: projected into the open index.
      escAt: intent.escalatedAt,
      accAt: intent.acceptedAt,
      transitions: intent.transitions.map(toStoredRecord),
    };
  }

  async reserve(intent: Intent): Promise<ReserveResult> {
    try {
      const out = await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: this.itemFromIntent(intent),
          ConditionExpression: 'attribute_not_exists(pk)',
          // The existing row comes back on the exception: duplicate vs conflict without a read.
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          ...this.capacityOption,
        }),
      );
      this.meter('reserve', out.ConsumedCapacity);
      return { kind: 'created', intent };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException) || !error.Item) throw error;
      // A refused write still costs a write unit; the exception carries no capacity figure.
      this.meter('reserve', undefined);
      const existing = intentFromItem(unmarshall(error.Item));
      return isSameContent(existing, intent)
        ? { kind: 'duplicate', existing }
        : { kind: 'conflict', existing };
    }
  }

  /**
   * One TransactWriteItems over the channels not yet known to exist. A cancellation names, per
   * channel, whether its condition failed (and carries the existing row, ALL_OLD); those are
   * settled as duplicate/conflict and the rest is tried again as one unit. A cancellation with
   * no failed condition is a concurrent transaction on the same rows: back off and try again.
   * A transaction costs twice the write units of a plain put, so a single channel takes `reserve`.
   */
  async reserveNotice(intents: readonly Intent[]): Promise<ReserveResult[]> {
    const results: (ReserveResult | undefined)[] = intents.map(() => undefined);
    for (let conflicts = 0; ; ) {
      const pending = intents.flatMap((intent, index) => (results[index] ? [] : [{ intent, index }]));
      if (pending.length === 0) return results as ReserveResult[];
      if (pending.length === 1) {
        const only = pending[0] as { intent: Intent; index: number };
        results[only.index] = await this.reserve(only.intent);
        continue;
      }
      try {
        const out = await this.doc.send(
          new TransactWriteItemsCommand({
            // Explicit so the SDK's own retries of this call replay it instead of failing on our rows.
            ClientRequestToken: randomUUID(),
            TransactItems: pending.map(({ intent }) => ({
              Put: {
                TableName: this.tableName,
                Item: marshall(this.itemFromIntent(intent), { removeUndefinedValues: true }),
                ConditionExpression: 'attribute_not_exists(pk)',
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              },
            })),
            ...(this.onConsumedCapacity ? { ReturnConsumedCapacity: 'TOTAL' as const } : {}),
          }),
        );
        for (const capacity of out.ConsumedCapacity ?? []) this.meter('reserve', capacity);
        for (const { intent, index } of pending) results[index] = { kind: 'created', intent };
      } catch (error) {
        if (!(error instanceof TransactionCanceledException)) throw error;
        let settled = 0;
        (error.CancellationReasons ?? []).forEach((reason, position) => {
          const entry = pending[position];
          if (!entry || reason.Code !== 'ConditionalCheckFailed' || !reason.Item) return;
          const existing = intentFromItem(unmarshall(reason.Item));
          results[entry.index] = isSameContent(existing, entry.intent)
            ? { kind: 'duplicate', existing }
            : { kind: 'conflict', existing };
          settled += 1;
        });
        this.meter('reserve', undefined);
        if (settled > 0) continue;
        const transient = (error.CancellationReasons ?? []).every((reason) =>
          RETRYABLE_CANCELLATIONS.has(reason.Code ?? 'None'),
        );
        conflicts += 1;
        if (!transient || conflicts >= MAX_TRANSACTION_CONFLICTS) throw error;
        await sleep(randomInt(5, 20 * 2 ** Math.min(conflicts, 5)));
      }
    }
  }

  async get(noticeId: string, channel: Channel): Promise<Intent | undefined> {
    const out = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: intentPk(noticeId), sk: channelSk(channel) },
        // A worker deciding whether to send must see the latest committed state.
        ConsistentRead: true,
        ...this.capacityOption,
      }),
    );
    this.meter('get', out.ConsumedCapacity);
    return out.Item ? intentFromItem(out.Item) : undefined;
  }

  async getNotice(noticeId: string): Promise<Intent[]> {
    const out = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': intentPk(noticeId) },
        ConsistentRead: true,
        ...this.capacityOption,
      }),
    );
    this.meter('getNotice', out.ConsumedCapacity);
    return (out.Items ?? []).map(intentFromItem);
  }

  /**
   *   condition: state = expected.state AND version = expected.version
   *   SET  every mutable field the plan defines, transitions = list_append(transitions, [record])
   *   REMOVE every mutable field the plan clears (lease, envelope, index keys …)
   * Earlier records are never touched: the only list operation is an append.
   */
  async apply(plan: TransitionPlan): Promise<TransitionResult> {
    const next = this.itemFromIntent(plan.next);
    // The index keys follow `dueAt`: set with it, removed with it.
    const mutable = [...MUTABLE_INTENT_FIELDS.map(storedName), 'openShard'];
    const names: Record<string, string> = {
      '#transitions': 'transitions',
      '#state': 'state',
      '#version': 'version',
    };
    const values: Record<string, unknown> = {
      ':record': [toStoredRecord(plan.record)],
      ':expectedState': plan.expected.state,
      ':expectedVersion': plan.expected.version,
    };
    const sets = ['#transitions = list_append(#transitions, :record)'];
    const removes: string[] = [];
    for (const field of mutable) {
      names[`#${field}`] = field;
      const value = next[field];
      if (value === undefined) removes.push(`#${field}`);
      else {
        values[`:${field}`] = value;
        sets.push(`#${field} = :${field}`);
      }
    }
    if (isTerminal(plan.next.state) && this.retentionMs !== undefined) {
      names['#expiresAt'] = LedgerTable.ttlAttribute;
      values[':expiresAt'] = Math.ceil((plan.record.at + this.retentionMs) / 1000);
      sets.push('#expiresAt = :expiresAt');
    }
    try {
      const out = await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: intentPk(plan.next.noticeId), sk: channelSk(plan.next.channel) },
          UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
          ConditionExpression: '#state = :expectedState AND #version = :expectedVersion',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          ...this.capacityOption,
        }),
      );
      this.meter(`apply:${plan.record.to}`, out.ConsumedCapacity);
      return { kind: 'applied', intent: plan.next };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      this.meter(`apply:${plan.record.to}`, undefined);
      return { kind: 'stale', current: error.Item ? intentFromItem(unmarshall(error.Item)) : undefined };
    }
  }

  async defer(noticeId: string, channel: Channel, expectedVersion: number, dueAt: number): Promise<boolean> {
    try {
      const out = await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: intentPk(noticeId), sk: channelSk(channel) },
          UpdateExpression: 'SET dueAt = :dueAt',
          ConditionExpression: 'version = :v AND attribute_exists(dueAt)',
          ExpressionAttributeValues: { ':dueAt': dueAt, ':v': expectedVersion },
          ...this.capacityOption,
        }),
      );
      this.meter('defer', out.ConsumedCapacity);
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        this.meter('defer', undefined);
        return false;
      }
      throw error;
    }
  }

  async settleEscalation(
    noticeId: string,
    channel: Channel,
    expectedVersion: number,
    options: { readonly keepOpen?: boolean; readonly dueAt?: number | undefined } = {},
  ): Promise<boolean> {
    try {
      const out = await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: intentPk(noticeId), sk: channelSk(channel) },
          // A failed row leaves the open index with the marker: it has nothing left to owe. An
          // escalated `unknown` is still owed an operator's action and stays; a held channel's row
          // stays too, due when its own next step is.
          UpdateExpression:
            options.dueAt !== undefined
              ? 'SET dueAt = :due REMOVE escalationPending'
              : options.keepOpen
                ? 'REMOVE escalationPending'
                : 'REMOVE escalationPending, dueAt, openShard',
          ConditionExpression: 'version = :v AND escalationPending = :yes',
          ExpressionAttributeValues: {
            ':v': expectedVersion,
            ':yes': true,
            ...(options.dueAt === undefined ? {} : { ':due': options.dueAt }),
          },
          ...this.capacityOption,
        }),
      );
      this.meter('settleEscalation', out.ConsumedCapacity);
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        this.meter('settleEscalation', undefined);
        return false;
      }
      throw error;
    }
  }

  /**
   * The key check item (`K#keys`): one consistent read per process start; each check value
   * missing from it is added with a condition, so of two first starts with different keys one
   * records its values and the other finds them differ.
   */
  async checkKeys(mine: KeyChecks) {
    const key = { pk: KEY_CHECK_PK, sk: KEY_CHECK_SK };
    const read = async (): Promise<KeyChecks> => {
      const out = await this.doc.send(
        new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }),
      );
      const item = out.Item ?? {};
      return {
        fingerprint: item.fingerprint as string | undefined,
        envelope: item.envelope as string | undefined,
        keysFrom: item.keysFrom as string | undefined,
      };
    };
    let recorded = await read();
    const missing = (['fingerprint', 'envelope', 'keysFrom'] as const).filter(
      (field) => mine[field] !== undefined && recorded[field] === undefined,
    );
    if (missing.length > 0) {
      try {
        await this.doc.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: key,
            UpdateExpression: `SET ${missing.map((f) => `#${f} = :${f}`).join(', ')}`,
            ConditionExpression: missing.map((f) => `attribute_not_exists(#${f})`).join(' AND '),
            ExpressionAttributeNames: Object.fromEntries(missing.map((f) => [`#${f}`, f])),
            ExpressionAttributeValues: Object.fromEntries(missing.map((f) => [`:${f}`, mine[f]])),
          }),
        );
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      }
      recorded = await read();
    }
    const mismatched = (['fingerprint', 'envelope'] as const).filter(
      (field) => mine[field] !== undefined && recorded[field] !== mine[field],
    );
    return { recorded, mismatched };
  }

  listDue(now: number, options: { limit?: number; cursor?: string } = {}): Promise<OpenIntentPage> {
    return this.queryOpen('listDue', now, options);
  }

  listOpen(options: { limit?: number; cursor?: string } = {}): Promise<OpenIntentPage> {
    return this.queryOpen('listOpen', undefined, options);
  }

  /**
   * Walks the open-index shards in order. The cursor is `<shard>:<base64 LastEvaluatedKey>`,
   * so a caller can resume across shards without knowing they exist.
   */
  private async queryOpen(
    operation: string,
    dueBefore: number | undefined,
    options: { limit?: number; cursor?: string },
  ): Promise<OpenIntentPage> {
    const limit = options.limit ?? 100;
    let shard = 0;
    let startKey: Record<string, unknown> | undefined;
    if (options.cursor) {
      const [shardText, keyText] = options.cursor.split(':', 2);
      shard = Number(shardText);
      startKey = keyText ? JSON.parse(Buffer.from(keyText, 'base64url').toString('utf8')) : undefined;
    }
    const items: OpenIntentRef[] = [];
    while (shard < this.openShards && items.length < limit) {
      const out = await this.doc.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: LedgerTable.openIndexName,
          KeyConditionExpression:
            dueBefore === undefined ? 'openShard = :shard' : 'openShard = :shard AND dueAt <= :now',
          ExpressionAttributeValues: {
            ':shard': `open#${shard}`,
            ...(dueBefore === undefined ? {} : { ':now': dueBefore }),
          },
          Limit: limit - items.length,
          ExclusiveStartKey: startKey,
          ...this.capacityOption,
        }),
      );
      this.meter(operation, out.ConsumedCapacity);
      for (const item of out.Items ?? []) items.push(refFromIndexItem(item));
      if (out.LastEvaluatedKey) {
        startKey = out.LastEvaluatedKey;
        if (items.length >= limit) {
          return { items, cursor: `${shard}:${Buffer.from(JSON.stringify(startKey)).toString('base64url')}` };
        }
      } else {
        shard += 1;
        startKey = undefined;
      }
    }
    return { items, cursor: shard < this.openShards ? `${shard}:` : undefined };
  }

  /**
   * Walks the open index alone: its items project the state, so no row is read (eventually
   * consistent, like every index read: a gauge may lag a transition by a moment). Reads stay
   * proportional to the open rows.
   */
  async countOpen(): Promise<OpenIntentCounts> {
    const refs: OpenIntentRef[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.queryOpen('countOpen', undefined, {
        limit: 1000,
        ...(cursor ? { cursor } : {}),
      });
      refs.push(...page.items);
      cursor = page.cursor;
    } while (cursor);
    return countRefs(refs);
  }

  async readGate(channel: Channel): Promise<number | undefined> {
    const out = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: gatePk(channel), sk: GATE_SK },
        // Eventually consistent is enough: a gate seen a moment late costs one extra 429.
        ProjectionExpression: 'closedUntil',
        ...this.capacityOption,
      }),
    );
    this.meter('readGate', out.ConsumedCapacity);
    return out.Item?.closedUntil as number | undefined;
  }

  async closeGate(channel: Channel, untilMs: number, reason: string): Promise<boolean> {
    try {
      const out = await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: gatePk(channel), sk: GATE_SK },
          UpdateExpression: 'SET closedUntil = :until, reason = :reason',
          // Only ever extend: two workers reporting different advice keep the later one.
          ConditionExpression: 'attribute_not_exists(closedUntil) OR closedUntil < :until',
          ExpressionAttributeValues: { ':until': untilMs, ':reason': reason },
          ...this.capacityOption,
        }),
      );
      this.meter('closeGate', out.ConsumedCapacity);
      return true;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      this.meter('closeGate', undefined);
      return false;
    }
  }

  /**
   * One conditional UpdateItem that creates the `B#<id>` item (UpdateItem, not PutItem: the
   * senders hold no PutItem grant, and need none). Members in short keys, the TTL in epoch
   * seconds. A batch id is written once: a second write of the same id is refused (an error,
   * since ids are fresh per call).
   */
  async recordBatch(batch: SendBatch): Promise<void> {
    const out = await this.doc.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: batchPk(batch.id), sk: BATCH_SK },
        UpdateExpression:
          'SET #channel = :channel, #provider = :provider, #key = :key, #createdAt = :createdAt, #members = :members, #ttl = :ttl',
        ConditionExpression: 'attribute_not_exists(pk)',
        ExpressionAttributeNames: {
          '#channel': 'channel',
          '#provider': 'provider',
          '#key': 'idemKey',
          '#createdAt': 'createdAt',
          '#members': 'members',
          '#ttl': LedgerTable.ttlAttribute,
        },
        ExpressionAttributeValues: {
          ':channel': batch.channel,
          ':provider': batch.provider,
          ':key': batch.idempotencyKey,
          ':createdAt': batch.createdAt,
          ':members': batch.members.map((m) => ({
            n: m.noticeId,
            c: m.channel,
            t: m.templateId,
            v: m.templateVersion,
            e: m.envelope,
            ...(m.deadline !== undefined ? { d: m.deadline } : {}),
          })),
          ':ttl': Math.ceil(batch.expiresAt / 1000),
        },
        ...this.capacityOption,
      }),
    );
    this.meter('recordBatch', out.ConsumedCapacity);
  }

  async getBatch(id: string): Promise<SendBatch | undefined> {
    const out = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: batchPk(id), sk: BATCH_SK },
        // Written before the call it describes; the lookup that asks must see it.
        ConsistentRead: true,
        ...this.capacityOption,
      }),
    );
    this.meter('getBatch', out.ConsumedCapacity);
    const item = out.Item;
    if (!item) return undefined;
    return {
      id,
      channel: item.channel as Channel,
      provider: item.provider as string,
      idempotencyKey: item.idemKey as string,
      createdAt: item.createdAt as number,
      expiresAt: (item[LedgerTable.ttlAttribute] as number) * 1000,
      members: (item.members as { n: string; c: Channel; t: string; v: string; e: string; d?: number }[]).map(
        (m) => ({
          noticeId: m.n,
          channel: m.c,
          templateId: m.t,
          templateVersion: m.v,
          envelope: m.e,
          ...(m.d !== undefined ? { deadline: m.d } : {}),
        }),
      ),
    };
  }

  private async readSuppressionItem(channel: Channel, fingerprint: string): Promise<Item | undefined> {
    const out = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: suppressionPk(channel, fingerprint), sk: SUPPRESSION_SK },
        ConsistentRead: true,
        ...this.capacityOption,
      }),
    );
    this.meter('getSuppression', out.ConsumedCapacity);
    return out.Item;
  }

  /** One GetItem of the `S` item (the sender's per-send check). */
  async getSuppression(channel: Channel, fingerprint: string): Promise<SuppressionState | undefined> {
    const item = await this.readSuppressionItem(channel, fingerprint);
    return item ? suppressionStateFromItem(channel, fingerprint, item) : undefined;
  }

  /**
   * Read the `S` item, then one TransactWriteItems: the history record (`H#<at>#<fact id>`,
   * only if that key is new) and the `S` item rewritten with the effective record, conditional on
   * the version read. A repeated fact is cancelled on its history key: nothing is written. A
   * concurrent append is cancelled on the version: read again and retry. An `S` item from before
   * the history gets its record copied into the history in the same write.
   */
  async appendSuppression(target: SuppressionTarget, record: SuppressionRecord): Promise<SuppressionAppend> {
    const pk = suppressionPk(target.channel, target.fingerprint);
    for (let race = 0; ; race++) {
      const item = await this.readSuppressionItem(target.channel, target.fingerprint);
      const current = item ? suppressionStateFromItem(target.channel, target.fingerprint, item) : undefined;
      const version = item?.ver as number | undefined;
      const latest = supersedes(record, current?.latest) ? record : (current?.latest as SuppressionRecord);
      const history = [record];
      if (current && version === undefined) history.push(current.latest);
      const puts = history.map((entry) => ({
        Put: {
          TableName: this.tableName,
          Item: marshall(
            { pk, sk: suppressionRecordSk(entry), ...recordToItem(entry) },
            { removeUndefinedValues: true },
          ),
          ConditionExpression: 'attribute_not_exists(sk)',
        },
      }));
      const state: SuppressionState = { ...target, latest };
      try {
        const out = await this.doc.send(
          new TransactWriteItemsCommand({
            ClientRequestToken: randomUUID(),
            TransactItems: [
              ...puts,
              {
                Put: {
                  TableName: this.tableName,
                  Item: marshall(
                    {
                      pk,
                      sk: SUPPRESSION_SK,
                      masked: target.masked,
                      ...recordToItem(latest),
                      ver: (version ?? 0) + 1,
                    },
                    { removeUndefinedValues: true },
                  ),
                  ConditionExpression: item
                    ? version === undefined
                      ? 'attribute_exists(pk) AND attribute_not_exists(ver)'
                      : 'ver = :ver'
                    : 'attribute_not_exists(pk)',
                  ...(version !== undefined
                    ? { ExpressionAttributeValues: marshall({ ':ver': version }) }
                    : {}),
                },
              },
            ],
            ...(this.onConsumedCapacity ? { ReturnConsumedCapacity: 'TOTAL' as const } : {}),
          }),
        );
        for (const capacity of out.ConsumedCapacity ?? []) this.meter('appendSuppression', capacity);
        return { state, appended: true };
      } catch (error) {
        if (!(error instanceof TransactionCanceledException)) throw error;
        this.meter('appendSuppression', undefined);
        const reasons = error.CancellationReasons ?? [];
        if (reasons[0]?.Code === 'ConditionalCheckFailed') {
          // This very fact is already recorded.
          const now = await this.getSuppression(target.channel, target.fingerprint);
          return { state: now ?? state, appended: false };
        }
        const transient = reasons.every((reason) =>
          ['None', 'ConditionalCheckFailed', ...RETRYABLE_CANCELLATIONS].includes(reason.Code ?? 'None'),
        );
        if (!transient || race + 1 >= MAX_SUPPRESSION_RACES) throw error;
        await sleep(randomInt(5, 20 * 2 ** Math.min(race + 1, 5)));
      }
    }
  }

  /**
   * One Query of the destination's partition, newest first: the `S` item sorts after every
   * `H#…` record, so it comes first, then the newest `limit` records (one more tells whether
   * older ones exist).
   */
  async getSuppressionHistory(
    channel: Channel,
    fingerprint: string,
    options: { limit?: number } = {},
  ): Promise<SuppressionHistory | undefined> {
    const limit = options.limit ?? 100;
    const out = await this.doc.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': suppressionPk(channel, fingerprint) },
        ScanIndexForward: false,
        Limit: limit + 2,
        ConsistentRead: true,
        ...this.capacityOption,
      }),
    );
    this.meter('getSuppressionHistory', out.ConsumedCapacity);
    const items = out.Items ?? [];
    const head = items.find((item) => item.sk === SUPPRESSION_SK);
    if (!head) return undefined;
    const state = suppressionStateFromItem(channel, fingerprint, head);
    const newestFirst = items.filter((item) => item.sk !== SUPPRESSION_SK).map(recordFromItem);
    // An `S` item from before the history is its own only record.
    const records = newestFirst.length === 0 ? [state.latest] : newestFirst.slice(0, limit).reverse();
    return { state, records, truncated: newestFirst.length > limit };
  }
}
