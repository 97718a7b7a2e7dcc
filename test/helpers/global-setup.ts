import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '../../local/dynamodb/server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    ddbEndpoint: string;
  }
}

/**
 * One DynamoDB Local for the whole run. The endpoint travels through `provide` because
 * workers are forked processes: `inject('ddbEndpoint')` reaches them reliably, whereas
 * environment changes made here are not part of vitest's contract with its workers.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const existing = process.env.AWS_ENDPOINT_URL_DYNAMODB;
  if (existing) {
    // Someone (CI, `npm start`, a developer) already runs one; don't start a second JVM.
    project.provide('ddbEndpoint', existing);
    return undefined;
  }

  const ddb = await startDynamoDbLocal({ inMemory: true });
  project.provide('ddbEndpoint', ddb.endpoint);
  return async () => {
    await ddb.stop();
  };
}
