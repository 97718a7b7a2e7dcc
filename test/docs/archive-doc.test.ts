import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ARCHIVE_FACT_COLUMNS, Archive } from '../../lambdas/contract/archive.ts';
import { Metric } from '../../lambdas/contract/metrics.ts';

const DOC = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'archive.md'), 'utf8');

/** The rows of the column table: `| \`name\` | type | meaning |`. */
const documentedColumns = () =>
  [...DOC.matchAll(/^\| `([a-z_]+)` +\| (string|int|bigint) +\|/gm)].map((m) => ({ name: m[1], type: m[2] }));

describe('docs/archive.md says what the archive is', () => {
  it('lists every fact column of the contract, in its order, with its Glue type', () => {
    expect(documentedColumns()).toEqual(ARCHIVE_FACT_COLUMNS.map(({ name, type }) => ({ name, type })));
  });

  it('names the prefixes, the metadata, the Glue database and table, and the metrics as the code does', () => {
    for (const name of [
      Archive.factsPrefix,
      Archive.rowsPrefix,
      Archive.lastSequenceMetadata,
      `${Archive.glueDatabase}.${Archive.glueFactsTable}`,
      Archive.firstDay,
      Metric.archivedFacts,
      Metric.archiveObjectsWritten,
      Metric.archiveDuplicatesSkipped,
      Metric.archiveLagSeconds,
    ]) {
      expect(DOC, name).toContain(name);
    }
  });
});
