/**
 * The services a benchmark run needs, each started by the bench (not by the stack) so that the
 * stack's SDK clients can be pointed at counting proxies, and so that the SQS server and the
 * simulators outlive the stack for the baseline run:
 *
 *   DynamoDB Local (in memory) ◀── proxy ◀─┐
 *   local-aws-sqs              ◀── proxy ◀─┼── the local stack (in this process)
 *   Scheduler stand-in         ◀── proxy ◀─┤
 *   aws-ses-v2-local (no event feed)  ◀────┤
 *   Twilio simulator (rate-capped) ◀───────┘
 *
 * Everything binds 127.0.0.1 (DynamoDB Local binds all interfaces; it has no option not to).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSqsServer } from 'local-aws-sqs';
import { type DynamoDbLocal, startDynamoDbLocal } from '../../local/dynamodb/server.ts';
import { LOCAL_ACCOUNT_ID } from '../../local/lambda-context.ts';
import { type SchedulerStandIn, startSchedulerStandIn } from '../../local/scheduler/server.ts';
import { type SesLocal, startSesLocal } from '../../local/ses/server.ts';
import { type CountingProxy, startCountingProxy } from './counting-proxy.ts';

export const REGION = 'us-east-1';

export interface BenchServices {
  readonly dynamodb: DynamoDbLocal;
  readonly sqsEndpoint: string;
  readonly ses: SesLocal;
  readonly scheduler: SchedulerStandIn;
  readonly proxies: {
    readonly dynamodb: CountingProxy;
    readonly sqs: CountingProxy;
    readonly scheduler: CountingProxy;
  };
  stop(): Promise<void>;
}

export async function startBenchServices(log: (line: string) => void): Promise<BenchServices> {
  const stops: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    while (stops.length > 0) {
      try {
        await stops.pop()?.();
      } catch (error) {
        log(`stop step failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  };
  try {
    const [dynamodb, sqsServer, ses] = await Promise.all([
      startDynamoDbLocal({ inMemory: true }),
      createSqsServer({ port: 0, hostname: '127.0.0.1', region: REGION, accountId: LOCAL_ACCOUNT_ID }),
      startSesLocal(),
    ]);
    stops.push(() => dynamodb.stop());
    stops.push(() => closeServer(sqsServer));
    stops.push(() => ses.close());
    const sqsEndpoint = `http://127.0.0.1:${(sqsServer.address() as AddressInfo).port}`;
    // The stand-in's own SendMessage calls go to SQS directly: they are Scheduler's work, not
    // requests our functions make.
    const scheduler = await startSchedulerStandIn({ sqsEndpoint, region: REGION, log });
    stops.push(() => scheduler.close());
    const [ddbProxy, sqsProxy, schedulerProxy] = await Promise.all([
      startCountingProxy({ service: 'dynamodb', upstream: dynamodb.endpoint }),
      startCountingProxy({ service: 'sqs', upstream: sqsEndpoint, rewriteOrigin: true }),
      startCountingProxy({ service: 'scheduler', upstream: scheduler.endpoint }),
    ]);
    stops.push(() => Promise.all([ddbProxy.close(), sqsProxy.close(), schedulerProxy.close()]));
    return {
      dynamodb,
      sqsEndpoint,
      ses,
      scheduler,
      proxies: { dynamodb: ddbProxy, sqs: sqsProxy, scheduler: schedulerProxy },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
