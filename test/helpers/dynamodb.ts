import { randomBytes } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { inject } from 'vitest';
import { requireIntegrationTier } from './tier.ts';

/** A client for the DynamoDB Local started (or reused) by the global setup. */
export function ddbClient(): DynamoDBClient {
  requireIntegrationTier('DynamoDB Local');
  return new DynamoDBClient({
    endpoint: inject('ddbEndpoint'),
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
}

const TABLE_NAME = /^[A-Za-z0-9_.-]+$/;

/**
 * Every test file shares one `-sharedDb` instance and may run in parallel, so each test
 * creates its own tables instead of cleaning up someone else's.
 */
export function uniqueTableName(prefix: string): string {
  const name = `${prefix}-${randomBytes(6).toString('hex')}`;
  if (!TABLE_NAME.test(prefix) || name.length > 255) {
    throw new Error(`uniqueTableName: "${prefix}" cannot prefix a DynamoDB table name`);
  }
  return name;
}
