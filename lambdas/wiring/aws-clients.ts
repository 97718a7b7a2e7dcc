import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { FunctionName } from '../contract/functions.ts';
import type { AwsClientPlugin, AwsSdkClient } from '../ports/provider.port.ts';

/**
 * Whether a failure is the ledger's or key table's DynamoDB refusing for capacity after the SDK's
 * retries: the HTTP router answers it 503 with Retry-After (lambdas/handlers/http/route.ts).
 */
export { isCapacityExceeded } from '../adapters/dynamodb/capacity.ts';
export type { AwsClientPlugin, AwsSdkClient };

/**
 * What the local stack adds to every AWS client a function builds: its IAM check against the
 * policy the CDK synthesizes for that function's role (local/iam/). Unset in Lambda, where IAM
 * itself checks each call; set once, before the first runtime is built.
 */
let pluginOf: ((fn: FunctionName) => AwsClientPlugin) | undefined;

export function useAwsClientPlugin(plugin: ((fn: FunctionName) => AwsClientPlugin) | undefined): void {
  pluginOf = plugin;
}

/**
 * Local only, beside the plugin above: what a local service adds to some functions' clients on
 * top of it (a queue's journal: local/sqs-journal.ts). Cleared with `undefined`.
 */
let extraPluginsOf: ((fn: FunctionName) => AwsClientPlugin | undefined)[] = [];

export function addAwsClientPlugin(
  plugin: ((fn: FunctionName) => AwsClientPlugin | undefined) | undefined,
): void {
  extraPluginsOf = plugin ? [...extraPluginsOf, plugin] : [];
}

/**
 * The AWS clients of one function's runtime: DynamoDB and SQS, built once per cold start and
 * shared by every adapter of that runtime (the ledger, the queues, the rate budget, the backlog
 * probe), so a function opens one connection pool per service, not one per adapter; and `adopt`,
 * through which every other client the function builds (KMS, EventBridge, Scheduler, Secrets
 * Manager, a provider's) passes, so each is the function's own as these two are.
 */
export interface AwsClients {
  readonly dynamodb: DynamoDBClient;
  readonly sqs: SQSClient;
  readonly adopt: <C extends AwsSdkClient>(client: C) => C;
}

/** How a client becomes `fn`'s own (a function that builds only some clients uses this alone). */
export function awsClientAdopter(fn: FunctionName): AwsClients['adopt'] {
  return (client) => {
    if (pluginOf) client.middlewareStack.use(pluginOf(fn));
    for (const extra of extraPluginsOf) {
      const plugin = extra(fn);
      if (plugin) client.middlewareStack.use(plugin);
    }
    return client;
  };
}

export function buildAwsClients(fn: FunctionName): AwsClients {
  const adopt = awsClientAdopter(fn);
  return { dynamodb: adopt(new DynamoDBClient({})), sqs: adopt(new SQSClient({})), adopt };
}
