/**
 * What the archive keeps of real rows, in bytes (issue 22; the line format of the archive design:
 * docs/archive.md once written, lambdas/contract/archive.ts): one `facts/` line per transition
 * record of a row plus the `expired` line its TTL removal adds, one `rows/` line per resolved row,
 * each a flat snake_case JSON object, gzip'd together as the archiver writes a batch; and the key
 * record each resolved channel leaves in the key table for the archive's retention.
 *
 * The lines are built here from the rows the benchmark produced, to price them
 * (bench/cost-model.ts); the archiver's own writer is the archive's.
 */
import { gzipSync } from 'node:zlib';
import { keyRecordBytes } from '../../lambdas/adapters/dynamodb/key-records.ts';
import { Archive, archiveObjectKey, streamLabelOf } from '../../lambdas/contract/archive.ts';
import { ARCHIVE_SETTINGS } from '../../lambdas/contract/archive-settings.ts';
import {
  archivedIntentOf,
  archivePartsOf,
  keyRecordExpiry,
  keyRecordOf,
} from '../../lambdas/domain/archive-record.ts';
import type { Intent } from '../../lambdas/domain/intent.ts';

export interface ArchiveBytes {
  /** Rows the lines were built from. */
  readonly rows: number;
  readonly factLinesPerRow: number;
  /** Uncompressed JSON per fact line, and gzip'd in one batch object. */
  readonly factLineBytes: number;
  readonly factLineGzBytes: number;
  readonly rowLineBytes: number;
  readonly rowLineGzBytes: number;
  /** The bytes a key record adds to its bucket (the key-table adapter's attribute, name and value, as DynamoDB bills an item's size). */
  readonly keyRecordBytes: number;
}

/** A stream sequence number as DynamoDB Streams writes them (21–40 digits). */
const sequence = (n: number) => `4960000000000000000${String(1_000_000_000_000 + n).padStart(21, '0')}`;

/**
 * The archiver's own lines for one row (lambdas/domain/archive-record.ts `archivePartsOf`): its
 * insert as the stream would hand it with every transition, then its TTL removal after the hot
 * window (one more fact); and its `rows/` line (`archivedIntentOf`).
 */
function archiveLinesOf(row: Intent, counter: { n: number }): { facts: string[]; rowLine: string } {
  const inserted = archivePartsOf({
    family: 'intent',
    sequence: sequence(counter.n++),
    createdAt: row.createdAt,
    newImage: row,
  });
  const removed = archivePartsOf({
    family: 'intent',
    sequence: sequence(counter.n++),
    createdAt: row.createdAt + 35 * 86_400_000,
    oldImage: row,
  });
  return {
    facts: [...inserted.facts, ...removed.facts].map((line) => JSON.stringify(line)),
    rowLine: JSON.stringify(archivedIntentOf(row)),
  };
}

/**
 * The bytes the key record of a resolved channel adds to its bucket as the archiver writes it (the
 * key-table adapter's own attribute, lambdas/adapters/dynamodb/key-records.ts), for a row resolved
 * at its last record, kept ARCHIVE_RETENTION_YEARS (6), in a deployment's bucket (KEY_BUCKET_CHARS).
 */
function keyRecordBytesOf(row: Intent, rowsObject: string): number {
  const resolvedAt = row.transitions.at(-1)?.at ?? row.createdAt;
  return keyRecordBytes(
    { record: keyRecordOf(archivedIntentOf(row), rowsObject), expiresAt: keyRecordExpiry(resolvedAt, 6) },
    ARCHIVE_SETTINGS.KEY_BUCKET_CHARS.deployDefault,
  );
}

/**
 * Bytes per line over `rows`, each once, in one batch of at most `batchRecords` lines (a gzip'd
 * object compresses across its lines: a batch of one would overstate it, repeated rows understate).
 */
export function archiveBytes(rows: readonly Intent[], batchRecords = 1000): ArchiveBytes {
  if (rows.length === 0) throw new Error('no rows to measure');
  const counter = { n: 0 };
  const facts: string[] = [];
  const resolved: string[] = [];
  // Each row once (a repeated row would compress better than real traffic does), up to a batch.
  for (const row of rows) {
    if (facts.length >= batchRecords) break;
    const lines = archiveLinesOf(row, counter);
    facts.push(...lines.facts);
    resolved.push(lines.rowLine);
  }
  const bytes = (lines: readonly string[]) => Buffer.byteLength(`${lines.join('\n')}\n`, 'utf8');
  const gz = (lines: readonly string[]) => gzipSync(`${lines.join('\n')}\n`).length;
  const objectKey = archiveObjectKey(Archive.rowsPrefix, {
    day: '2027-01-01',
    streamLabel: streamLabelOf(
      'arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/2026-05-01T12:00:00.000',
    ),
    sequence: sequence(0),
  });
  const round = (n: number) => Math.round(n * 10) / 10;
  return {
    rows: rows.length,
    factLinesPerRow: round(facts.length / resolved.length),
    factLineBytes: round(bytes(facts) / facts.length),
    factLineGzBytes: round(gz(facts) / facts.length),
    rowLineBytes: round(bytes(resolved) / resolved.length),
    rowLineGzBytes: round(gz(resolved) / resolved.length),
    keyRecordBytes: Math.round(
      rows.reduce((n, row) => n + keyRecordBytesOf(row, objectKey), 0) / rows.length,
    ),
  };
}
