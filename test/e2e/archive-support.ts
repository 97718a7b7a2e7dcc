/**
 * Reading a local stack's archive back (docs/archive.md) the way anyone can: list the bucket at
 * the stack's S3 endpoint, get each object, gunzip its JSON Lines. And comparing it with the
 * table's timelines: every transition of every row exactly once in the archive, in content.
 */
import { gunzipSync } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { Archive } from '../../lambdas/contract/archive.ts';
import { mapLimited } from './runbook-support.ts';
import type { Timeline } from './support.ts';

/** One `facts/` line (the columns of lambdas/contract/archive.ts this reads), with the object holding it. */
export interface FactLine {
  readonly kind: string;
  readonly notice_id?: string;
  readonly channel?: string;
  readonly seq?: number;
  readonly at?: string;
  readonly from_state?: string | null;
  readonly to_state?: string;
  readonly reason?: string;
  readonly object: string;
}

/** One `rows/` line: a resolved row as the archive keeps it. */
export interface RowLine {
  readonly noticeId: string;
  readonly channel: string;
  readonly state: string;
  readonly records: readonly { readonly seq: number }[];
  readonly object: string;
  readonly [field: string]: unknown;
}

export interface ArchiveContents {
  readonly objects: readonly string[];
  readonly facts: readonly FactLine[];
  readonly rows: readonly RowLine[];
}

export async function readArchive(endpoint: string, bucket: string): Promise<ArchiveContents> {
  const s3 = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    const objects: string[] = [];
    let token: string | undefined;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
      objects.push(...(page.Contents ?? []).map((c) => c.Key as string));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    const bodies = await mapLimited(objects, 8, async (key) => {
      const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      const bytes = Buffer.from(await (got.Body?.transformToByteArray() ?? new Uint8Array()));
      return gunzipSync(bytes)
        .toString('utf8')
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => ({ ...(JSON.parse(line) as Record<string, unknown>), object: key }));
    });
    const lines = (prefix: string) =>
      objects.flatMap((key, i) => (key.startsWith(prefix) ? (bodies[i] ?? []) : []));
    return {
      objects,
      facts: lines(Archive.factsPrefix) as unknown as FactLine[],
      rows: lines(Archive.rowsPrefix) as unknown as RowLine[],
    };
  } finally {
    s3.destroy();
  }
}

/** `kind notice channel seq`: what names one fact; the same twice is a duplicate. */
export function factKey(fact: Pick<FactLine, 'kind' | 'notice_id' | 'channel' | 'seq'>): string {
  return `${fact.kind} ${fact.notice_id} ${fact.channel} ${fact.seq ?? '-'}`;
}

/**
 * What differs between the timelines and the archive's facts: a transition the archive lacks or
 * holds twice, one whose content differs (states, reason, time), a transition fact no timeline
 * has. Empty: every transition of every row is in the archive exactly once.
 */
export function archiveProblems(timelines: readonly Timeline[], facts: readonly FactLine[]): string[] {
  const byKey = new Map<string, FactLine[]>();
  for (const fact of facts) {
    const key = factKey(fact);
    byKey.set(key, [...(byKey.get(key) ?? []), fact]);
  }
  const problems: string[] = [];
  for (const [key, copies] of byKey) {
    if (copies.length > 1)
      problems.push(`${key}: ${copies.length} copies (${copies.map((c) => c.object).join(', ')})`);
  }
  const owed = new Set<string>();
  for (const timeline of timelines) {
    for (const channel of timeline.channels) {
      for (const t of channel.transitions) {
        const key = factKey({
          kind: 'transition',
          notice_id: timeline.noticeId,
          channel: channel.channel,
          seq: t.seq,
        });
        owed.add(key);
        const fact = byKey.get(key)?.[0];
        if (!fact) {
          problems.push(`${key}: not archived`);
          continue;
        }
        const same =
          fact.to_state === t.to &&
          (fact.from_state ?? null) === t.from &&
          fact.reason === t.reason &&
          Date.parse(fact.at ?? '') === Date.parse(t.at);
        if (!same)
          problems.push(
            `${key}: archived as ${fact.from_state}→${fact.to_state} ${fact.reason} ${fact.at}, the table has ${t.from}→${t.to} ${t.reason} ${t.at}`,
          );
      }
    }
  }
  for (const key of byKey.keys()) {
    if (key.startsWith('transition ') && !owed.has(key)) problems.push(`${key}: archived, in no timeline`);
  }
  return problems;
}

/** How many transitions the timelines hold. */
export function transitionCount(timelines: readonly Timeline[]): number {
  return timelines.reduce((n, t) => n + t.channels.reduce((m, c) => m + c.transitions.length, 0), 0);
}
