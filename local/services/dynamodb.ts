import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startDynamoDbLocal } from '../dynamodb/server.ts';
import { externalService, type LocalService } from '../service.ts';

const JVM_PID_FILE = 'dynamodb-local.pid';

/**
 * DynamoDB Local (Java 17) with its data in `$LEDGER_DATA_DIR/dynamodb`, unless
 * `AWS_ENDPOINT_URL_DYNAMODB` names one to share. The JVM's pid is kept in the data dir, so a JVM
 * orphaned by a kill -9 of this process alone is found (and not started twice on the same files).
 */
export const dynamodbService: LocalService = {
  name: 'dynamodb',
  external: (env) => env.AWS_ENDPOINT_URL_DYNAMODB || undefined,
  async start({ dataDir }) {
    const dynamoDir = join(dataDir, 'dynamodb');
    await assertNoOrphanJvm(dataDir, dynamoDir);
    const jvm = await startDynamoDbLocal({ dataDir: dynamoDir });
    await writeFile(join(dataDir, JVM_PID_FILE), `${jvm.pid}\n`);
    return {
      env: { AWS_ENDPOINT_URL_DYNAMODB: jvm.endpoint },
      endpoint: jvm.endpoint,
      describe: `started (DynamoDB Local, data in ${dynamoDir}, pid ${jvm.pid})`,
      pid: jvm.pid,
      async stop() {
        await jvm.stop();
        await rm(join(dataDir, JVM_PID_FILE), { force: true });
      },
    };
  },
};

/** The JVM's pid when this stack started it (the banner's kill hint), for the state file. */
export function jvmPidOf(service: unknown): number | undefined {
  const pid = (service as { pid?: unknown } | undefined)?.pid;
  return typeof pid === 'number' ? pid : undefined;
}

export { externalService };

/**
 * A JVM left behind by a parent that was SIGKILLed alone keeps serving the data dir; a second
 * one on the same files would corrupt or shadow it. Refuse, and say which pid to stop.
 * Linux only (reads /proc); elsewhere nothing is checked.
 */
async function assertNoOrphanJvm(dataDir: string, dynamoDir: string): Promise<void> {
  let pid: number;
  try {
    pid = Number.parseInt(await readFile(join(dataDir, JVM_PID_FILE), 'utf8'), 10);
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0) return;
  let cmdline: string;
  try {
    cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').join(' ');
  } catch {
    return;
  }
  if (cmdline.includes('DynamoDBLocal.jar') && cmdline.includes(dynamoDir)) {
    throw new Error(
      `DynamoDB Local (pid ${pid}) from an earlier run still serves ${dynamoDir}; stop it first: kill ${pid}`,
    );
  }
}
