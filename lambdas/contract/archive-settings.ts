/**
 * The settings of the hot window and the write-once archive (docs/archive.md): how long a resolved
 * row stays in the table, how long the archive keeps every fact, and the bucket the stack wires.
 * Spread into ./settings.ts, the one vocabulary; kept here so that file stays short.
 */
export const ARCHIVE_SETTINGS = {
  HOT_RETENTION: {
    kind: 'duration',
    default: 'P35D',
    minMs: 10_000,
    deployMinMs: 86_400_000,
    description:
      'how long a resolved row stays in the table before DynamoDB TTL removes it (ISO 8601, e.g. ' +
      'P35D); its story stays in the archive (docs/archive.md) and its key record (the key table) ' +
      'answers replays. ' +
      'A deployment keeps at least a day, so the archive (at most 15 minutes behind) always has a ' +
      'row before it can expire; locally as short as PT10S',
  },
  ARCHIVE_RETENTION_YEARS: {
    kind: 'integer',
    default: 6,
    min: 1,
    max: 100,
    deployMin: 6,
    description:
      'years the write-once archive keeps every fact (S3 Object Lock, compliance mode: nobody can ' +
      'shorten it) and key records keep answering replays; HIPAA documentation is kept six years ' +
      '(45 CFR 164.316)',
  },
  KEY_BUCKET_CHARS: {
    kind: 'integer',
    default: 2,
    deployDefault: 5,
    min: 1,
    max: 8,
    description:
      'characters of the notice id naming a key-table bucket (32^n buckets; docs/archive.md "Key records"): ' +
      'records are packed into buckets, which should stay near 1 KB (about 8 records) to cost one write ' +
      'unit a record; 5 (33.5 million buckets) fits some 250 million channels resolved over the retention, ' +
      'each character more 32 times that. Changing it on a live table means rebuilding the key table ' +
      '(docs/deploy.md "Rebuilding the key table"); locally 2, so that tests pack many records a bucket',
  },
} as const;

export const ARCHIVE_WIRING_SETTINGS = {
  KEY_TABLE_NAME: {
    kind: 'text',
    description:
      'the key table: one compact item per resolved (notice, channel) that answers replays after the hot ' +
      'window (docs/archive.md "Key records"); unset: LEDGER_TABLE_NAME + `-keys` (the local stack ' +
      'creates it when missing)',
  },
  ARCHIVE_BUCKET: {
    kind: 'text',
    description: 'the write-once archive bucket (S3 Object Lock, compliance mode; docs/archive.md)',
  },
  AWS_ENDPOINT_URL_S3: {
    kind: 'url',
    description:
      'local stack: the S3-compatible store (read by the AWS SDK itself); set, the archive’s S3 client ' +
      'addresses the bucket in the path (a local endpoint serves no per-bucket host names)',
  },
} as const;
