/** Notice bodies for the bench, and reading their ledger rows back. */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { deriveNoticeId } from '../../lambdas/domain/identity.ts';

export const EVENT_TYPE = 'lab-result-ready';

/**
 * A distinct E.164 number per notice, so duplicates are counted per destination at the simulator.
 * Each phase draws from its own block (`block` × 1 000 000), so a late retry from one phase can
 * never pass for a duplicate in another.
 */
export function benchPhone(index: number, block = 0): string {
  return `+1555${String(block * 1_000_000 + 1 + index).padStart(7, '0')}`;
}

export interface BenchNotice {
  readonly index: number;
  readonly noticeId: string;
  readonly phone: string;
  readonly body: Record<string, unknown>;
}

export function benchNotices(
  tag: string,
  count: number,
  channels: readonly ('email' | 'sms')[] = ['sms'],
  phoneBlock = 0,
): BenchNotice[] {
  return Array.from({ length: count }, (_, index) => {
    const eventId = `evt_${tag}_${index}`;
    const recipientId = `pat_${tag}_${index}`;
    const phone = benchPhone(index, phoneBlock);
    return {
      index,
      noticeId: deriveNoticeId(EVENT_TYPE, eventId, recipientId),
      phone,
      body: {
        eventId,
        eventType: EVENT_TYPE,
        recipient: {
          id: recipientId,
          phone,
          ...(channels.includes('email') ? { email: `patient.${index}@example.com` } : {}),
        },
        channels,
        template: { id: 'lab-result-ready', version: 'v3' },
        variables: { firstName: 'Ada', portalUrl: 'https://portal.example.com/results' },
      },
    };
  });
}

export interface PostedBatch {
  readonly startedAt: number;
  readonly finishedAt: number;
  readonly statuses: Record<string, number>;
}

/**
 * POSTs the notices to `/v1/notices/batch`, `perRequest` (at most the API's 100) per request,
 * `concurrency` requests at a time. Returns per notice the time its request started (the trigger
 * time).
 */
export async function postBurst(
  apiUrl: string,
  notices: readonly BenchNotice[],
  concurrency = 4,
  perRequest = 100,
): Promise<{ triggers: number[]; batches: PostedBatch[] }> {
  const chunks: BenchNotice[][] = [];
  for (let i = 0; i < notices.length; i += perRequest) chunks.push(notices.slice(i, i + perRequest));
  const triggers = new Array<number>(notices.length).fill(Number.NaN);
  const batches: PostedBatch[] = [];
  let next = 0;
  const worker = async () => {
    while (next < chunks.length) {
      const chunk = chunks[next++] as BenchNotice[];
      const startedAt = Date.now();
      for (const notice of chunk) triggers[notice.index] = startedAt;
      const response = await fetch(`${apiUrl}/v1/notices/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ notices: chunk.map((n) => n.body) }),
      });
      const out = (await response.json()) as { results?: { status: number }[] };
      if (response.status !== 200 || !out.results) {
        throw new Error(`batch POST answered ${response.status}`);
      }
      const statuses: Record<string, number> = {};
      for (const result of out.results) statuses[result.status] = (statuses[result.status] ?? 0) + 1;
      batches.push({ startedAt, finishedAt: Date.now(), statuses });
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, chunks.length) }, worker));
  return { triggers, batches };
}

export interface LedgerRow {
  readonly noticeId: string;
  readonly state: string;
  readonly attempts: number;
  readonly createdAt: number;
  readonly providerReceiptId?: string;
  readonly deadline?: number;
  readonly escalationPending?: boolean;
  readonly transitions: readonly { n: number; at: number; fr?: string; to: string; r: string }[];
}

/** Reads the rows of (noticeId, channel) with BatchGetItem, 100 keys per request. */
export async function readLedgerRows(
  client: DynamoDBClient,
  tableName: string,
  noticeIds: readonly string[],
  channel: 'email' | 'sms',
): Promise<Map<string, LedgerRow>> {
  const doc = DynamoDBDocumentClient.from(client);
  const rows = new Map<string, LedgerRow>();
  for (let i = 0; i < noticeIds.length; i += 100) {
    let keys: Record<string, unknown>[] = noticeIds
      .slice(i, i + 100)
      .map((id) => ({ pk: `N#${id}`, sk: `C#${channel}` }));
    for (let round = 0; keys.length > 0 && round < 20; round++) {
      const out = await doc.send(
        new BatchGetCommand({
          RequestItems: {
            [tableName]: {
              Keys: keys,
              ProjectionExpression:
                'pk, #s, attempts, createdAt, providerReceiptId, transitions, deadline, escalationPending',
              ExpressionAttributeNames: { '#s': 'state' },
            },
          },
        }),
      );
      for (const item of out.Responses?.[tableName] ?? []) {
        const noticeId = (item.pk as string).slice(2);
        rows.set(noticeId, {
          noticeId,
          state: item.state as string,
          attempts: item.attempts as number,
          createdAt: item.createdAt as number,
          ...(item.providerReceiptId ? { providerReceiptId: item.providerReceiptId as string } : {}),
          ...(item.deadline !== undefined ? { deadline: item.deadline as number } : {}),
          ...(item.escalationPending === true ? { escalationPending: true } : {}),
          transitions: (item.transitions as LedgerRow['transitions'] | undefined) ?? [],
        });
      }
      keys = (out.UnprocessedKeys?.[tableName]?.Keys as Record<string, unknown>[] | undefined) ?? [];
    }
  }
  return rows;
}

/** When the provider's acceptance was recorded (the first `accepted` record), if it was. */
export function acceptedAt(row: LedgerRow | undefined): number | undefined {
  return row?.transitions.find((t) => t.to === 'accepted')?.at;
}
