import { join } from 'node:path';
import type { LocalIam } from '../iam/enforce.ts';
import { LOCAL_ACCOUNT_ID } from '../lambda-context.ts';
import { startSchedulerStandIn } from '../scheduler/server.ts';
import type { LocalService } from '../service.ts';
import { servicePort } from '../settings.ts';

/**
 * No Scheduler emulator exists: the stand-in (local/scheduler) plays EventBridge Scheduler unless
 * `AWS_ENDPOINT_URL_SCHEDULER` names one, so the production adapter runs unchanged. Its schedules
 * persist in the data dir, so a retry scheduled before a crash still fires after the restart.
 * `LOCAL_SCHEDULER_PORT` fixes its port. It enqueues a retry as the role Scheduler assumes in AWS
 * (the retry scheduler's, checked by `iam`).
 */
export function schedulerService(iam: LocalIam): LocalService {
  return {
    name: 'scheduler',
    external: (env) => env.AWS_ENDPOINT_URL_SCHEDULER || undefined,
    async start({ env, dataDir, region, log }) {
      const stateFile = join(dataDir, 'scheduler.json');
      const port = servicePort(env, 'scheduler');
      const standIn = await startSchedulerStandIn({
        sqsEndpoint: env.AWS_ENDPOINT_URL_SQS as string,
        region,
        stateFile,
        log,
        port,
        sendAs: iam.plugin('retryScheduler'),
      });
      return {
        env: { AWS_ENDPOINT_URL_SCHEDULER: standIn.endpoint },
        endpoint: standIn.endpoint,
        describe: `started (local EventBridge Scheduler stand-in, schedules in ${stateFile})`,
        stop: () => standIn.close(),
      };
    },
  };
}

/** With a Scheduler endpoint, the production adapter runs: it only needs a role to name. */
export const SCHEDULER_ROLE_ARN = `arn:aws:iam::${LOCAL_ACCOUNT_ID}:role/notice-ledger-scheduler`;
