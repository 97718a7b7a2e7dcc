import { templateCatalog } from '../../templates/catalog.ts';
import { dynamoDbKeyRecords } from '../adapters/dynamodb/key-records.ts';
import type { NextStepPolicy } from '../domain/next-step.ts';
import { type CallerDirectory, callerDirectory } from '../edge/caller.ts';
import { type Config, readConfig } from '../edge/config.ts';
import { systemClock } from '../ports/clock.port.ts';
import type { DeadlineRiskDependencies } from '../use-cases/deadline-risk.ts';
import type {
  IntakeDependencies,
  OperatorDependencies,
  SuppressionDependencies,
} from '../use-cases/dependencies.ts';
import { archiveObjects } from './archive.ts';
import { buildAwsClients } from './aws-clients.ts';
import { configuredChannels, retryPolicyOf, timingOf } from './core.ts';
import { buildDeadlineRisk } from './deadline-risk.ts';
import { buildSealer } from './envelope.ts';
import { loadFingerprintKey } from './fingerprint.ts';
import { httpLedger, keyCheckStore, keyTable, ledgerTable, verifyKeys } from './ledger.ts';
import { once } from './once.ts';
import { buildQueue, buildRowWatch } from './queue.ts';
import { sendWindowsOf } from './send-windows.ts';

/**
 * The http function (intake, timelines, operator routes and suppressions): the ledger, the key
 * records of rows past the hot window (the key table, read only), the archive's rows (read only), both channel queues,
 * envelope sealing, the fingerprint key and the retry policy (an operator's "not sent" schedules
 * a resend). No provider code: inbound provider events have a function of
 * their own (./provider-events.ts).
 */
export interface HttpRuntime {
  readonly config: Config;
  readonly deps: IntakeDependencies &
    OperatorDependencies &
    SuppressionDependencies &
    DeadlineRiskDependencies & {
      /** What times the system's own next steps that the list and the timeline show. */
      readonly nextStepPolicy?: NextStepPolicy | undefined;
    };
}

export async function buildHttpRuntime(
  env: Record<string, string | undefined> = process.env,
): Promise<HttpRuntime> {
  const config = readConfig(env);
  const clients = buildAwsClients('http');
  const table = ledgerTable(config, clients.dynamodb);
  const { sealer, held } = buildSealer(config, clients);
  const fingerprint = await loadFingerprintKey(config, clients);
  await verifyKeys(keyCheckStore(table), [fingerprint, ...held]);
  return {
    config,
    deps: {
      store: httpLedger(table),
      // A channel whose row left the table (HOT_RETENTION): intake's replay, the timeline's read.
      keyRecords: {
        keyRecordsOf: dynamoDbKeyRecords(keyTable(config, clients.dynamodb), {
          bucketChars: config.KEY_BUCKET_CHARS,
        }).keyRecordsOf,
      },
      archivedRows: archiveObjects(
        config,
        clients.adopt,
        'the http function (a timeline, or a conflicting replay, past the hot window)',
      ),
      queue: buildQueue(config, clients.sqs),
      watch: buildRowWatch(config, clients.sqs),
      sealer,
      catalog: templateCatalog,
      clock: systemClock,
      fingerprintKey: fingerprint.key,
      timing: timingOf(config),
      retryPolicy: retryPolicyOf(config),
      random: Math.random,
      defaultDeadlineMs: config.NOTICE_DEFAULT_DEADLINE_MS,
      nextStepPolicy: {
        unknownGraceMs: config.UNKNOWN_GRACE_MS,
        reportDeadlineMs: config.DELIVERY_REPORT_DEADLINE_MS,
      },
      configuredChannels: configuredChannels(env),
      sendWindows: sendWindowsOf(config),
      ...buildDeadlineRisk(config, clients),
    },
  };
}

export const getHttpRuntime = once(() => buildHttpRuntime());

/**
 * The role map (edge/caller.ts), read from the settings once per process: apart from the runtime,
 * which the routes that need no ledger (health, the OpenAPI document) never build.
 */
let directory: CallerDirectory | undefined;
export function getCallerDirectory(): CallerDirectory {
  directory ??= callerDirectory(readConfig());
  return directory;
}
