import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';

/**
 * The DynamoDB and SQS clients of one runtime: built once per cold start and shared by every
 * adapter of that runtime (the ledger, the queues, the rate budget, the backlog probe), so a
 * function opens one connection pool per service, not one per adapter.
 */
export interface AwsClients {
  readonly dynamodb: DynamoDBClient;
  readonly sqs: SQSClient;
}

export function buildAwsClients(): AwsClients {
  return { dynamodb: new DynamoDBClient({}), sqs: new SQSClient({}) };
}
