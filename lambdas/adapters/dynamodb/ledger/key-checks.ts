import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { KeyCheckStore, KeyChecks } from '../../../ports/key-checks.port.ts';
import type { LedgerTableClient } from './table-client.ts';

/** The key check item (docs/table-design.md). */
const KEY_CHECK_KEY = { pk: 'K#keys', sk: 'K' };

async function readKeyChecks(table: LedgerTableClient): Promise<KeyChecks> {
  const out = await table.doc.send(
    new GetCommand({ TableName: table.tableName, Key: KEY_CHECK_KEY, ConsistentRead: true }),
  );
  const item = out.Item ?? {};
  return {
    fingerprint: item.fingerprint as string | undefined,
    envelope: item.envelope as string | undefined,
    keysFrom: item.keysFrom as string | undefined,
  };
}

/**
 * The key check item (`K#keys`): one consistent read per process start; each check value
 * missing from it is added with a condition, so of two first starts with different keys one
 * records its values and the other finds them differ.
 */
async function checkKeys(table: LedgerTableClient, mine: KeyChecks) {
  let recorded = await readKeyChecks(table);
  const missing = (['fingerprint', 'envelope', 'keysFrom'] as const).filter(
    (field) => mine[field] !== undefined && recorded[field] === undefined,
  );
  if (missing.length > 0) {
    try {
      await table.doc.send(
        new UpdateCommand({
          TableName: table.tableName,
          Key: KEY_CHECK_KEY,
          UpdateExpression: `SET ${missing.map((f) => `#${f} = :${f}`).join(', ')}`,
          ConditionExpression: missing.map((f) => `attribute_not_exists(#${f})`).join(' AND '),
          ExpressionAttributeNames: Object.fromEntries(missing.map((f) => [`#${f}`, f])),
          ExpressionAttributeValues: Object.fromEntries(missing.map((f) => [`:${f}`, mine[f]])),
        }),
      );
    } catch (error) {
      // Another first start recorded its values meanwhile: read them, and compare.
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
    recorded = await readKeyChecks(table);
  }
  const mismatched = (['fingerprint', 'envelope'] as const).filter(
    (field) => mine[field] !== undefined && recorded[field] !== mine[field],
  );
  return { recorded, mismatched };
}

export function dynamoDbKeyChecks(table: LedgerTableClient): KeyCheckStore {
  return { checkKeys: (mine) => checkKeys(table, mine) };
}
