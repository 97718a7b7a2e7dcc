import { join } from 'node:path';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, EventBridgeEvent } from 'aws-lambda';
import { laneEventSource } from '../../lambdas/contract/lanes.ts';
import { findRoute } from '../../lambdas/contract/routes.ts';
import { CHANNEL_SETTINGS } from '../../lambdas/contract/settings.ts';
import { CHANNELS, type Channel } from '../../lambdas/domain/channel.ts';
import { readConfig } from '../../lambdas/edge/config.ts';
import { handler as httpApi } from '../../lambdas/handlers/http-api.ts';
import { handler as providerEvents } from '../../lambdas/handlers/provider-events.ts';
import { handler as reconcilerHandler } from '../../lambdas/handlers/reconciler.ts';
import { handler as sendEmail } from '../../lambdas/handlers/send-email.ts';
import { handler as sendSms } from '../../lambdas/handlers/send-sms.ts';
import { handler as watchHandler } from '../../lambdas/handlers/watch.ts';
import { addAwsClientPlugin } from '../../lambdas/wiring/aws-clients.ts';
import { configuredChannels } from '../../lambdas/wiring/core.ts';
import { getCallerDirectory, getHttpRuntime } from '../../lambdas/wiring/http.ts';
import { getProviderEventsRuntime } from '../../lambdas/wiring/provider-events.ts';
import { getReconcilerRuntime } from '../../lambdas/wiring/reconciler.ts';
import { getSenderRuntime } from '../../lambdas/wiring/sender.ts';
import { getWatchRuntime } from '../../lambdas/wiring/watch.ts';
import { isConsolePath, serveConsole } from '../console.ts';
import { type CrashPointSpec, describeCrashPoint, installCrashPoints } from '../crash-points.ts';
import type { HttpApiHandler } from '../http-gateway.ts';
import type { LocalIam } from '../iam/enforce.ts';
import { startPeriodicTask } from '../periodic-task.ts';
import type { LocalProvider } from '../providers/local-provider.ts';
import type { LocalService, StackContext } from '../service.ts';
import { type SqsEventSource, type SqsHandler, startSqsEventSource } from '../sqs-event-source.ts';
import { sqsJournal } from '../sqs-journal.ts';
import type { QueueInfo } from './queues.ts';

const RECONCILER_FIRST_RUN_MS = 1_000;
const POLLER_DRAIN_MS = 10_000;
const RECONCILER_DRAIN_MS = 10_000;

/**
 * Where each route's function runs locally: the same split as the two API integrations in AWS;
 * and, local only, the console pages (../console.ts), rendered from the http function's answers.
 */
export const dispatchHttp: HttpApiHandler = async (event: APIGatewayProxyEventV2) => {
  const path = event.rawPath || '/';
  if (isConsolePath(path)) return serveConsole(event, httpApi);
  const fn = findRoute(path)?.route.function;
  return fn === 'providerEvents' ? providerEvents(event) : httpApi(event);
};

export interface FunctionsOptions {
  readonly queues: () => Readonly<Record<Channel, QueueInfo>>;
  /** Lane queues of their own (unless LOCAL_LANES=off), each polled for its channel's sender. */
  readonly lanes?: () => readonly (QueueInfo & {
    readonly channel: Channel;
    readonly lane: 'critical' | 'bulk';
  })[];
  /** Intake's watches (docs/table-design.md "Watched rows"): polled for the watch function. */
  readonly watch: () => QueueInfo;
  readonly functionTimeoutMs: number;
  readonly concurrency: number;
  readonly reconcileIntervalMs: number;
  readonly crashPoint: CrashPointSpec | undefined;
  /** Channels whose SQS event sources run (`LOCAL_SENDERS`; default both). */
  readonly senders: readonly Channel[];
  /** Providers with a feed (events their simulator cannot deliver) and whether this stack started them. */
  readonly feeds: readonly { readonly provider: LocalProvider; readonly started: boolean }[];
  /** The IAM check: each sender's event sources poll as its role, as Lambda's mappings do. */
  readonly iam: LocalIam;
}

/**
 * The functions, as Lambda would run them: the runtimes are built first (so a configuration
 * problem stops the start with its message, as a cold start would), then the SQS event sources
 * of the two senders, the reconciler's schedule, and the event feeds of simulators that publish
 * none. The HTTP functions are served by the gateway (see `dispatchHttp`).
 */
export function functionsService(options: FunctionsOptions): LocalService {
  return {
    name: 'functions',
    async start(context) {
      const { log, region } = context;
      // The watch queue survives a restart, as SQS's would (../sqs-journal.ts): a watch lost with
      // the in-memory queue would leave its row out of the open index for good. Journaled on
      // intake's sends and the watch poller's deletes; what was owed is sent again (at once).
      const watchQueue = options.watch();
      const watchJournal = sqsJournal(join(context.dataDir, 'watch.journal'), () => watchQueue.url);
      addAwsClientPlugin((fn) => (fn === 'http' ? watchJournal.plugin : undefined));
      const replayClient = new SQSClient({ endpoint: context.env.AWS_ENDPOINT_URL_SQS, region });
      replayClient.middlewareStack.use(watchJournal.plugin);
      const replayed = await watchJournal.replay(replayClient).finally(() => replayClient.destroy());
      if (replayed > 0) log(`watch: ${replayed} watch(es) queued again after the restart`);
      await getHttpRuntime();
      // The role map too, so that a malformed entry stops the start, named (as a cold start would).
      getCallerDirectory();
      await getProviderEventsRuntime();
      // A channel whose provider is `none` has no sender and no poller, as in AWS no event source.
      const channels = configuredChannels(context.env);
      const senders = await Promise.all(channels.map((channel) => getSenderRuntime(channel)));
      await getReconcilerRuntime();
      await getWatchRuntime();
      if (options.crashPoint) {
        // Before any handler runs: the ports are wrapped on the runtimes the handlers use.
        for (const sender of senders) installCrashPoints(sender, options.crashPoint);
        log(
          `CRASH_POINT armed: ${describeCrashPoint(options.crashPoint)} (this process will SIGKILL itself)`,
        );
      }

      const pollerClient = (channel: Channel) =>
        options.iam.adopt(
          channel === 'email' ? 'sendEmail' : 'sendSms',
          new SQSClient({
            endpoint: context.env.AWS_ENDPOINT_URL_SQS,
            region,
            requestHandler: { connectionTimeout: 2_000, requestTimeout: 10_000 },
          }),
        );
      // Only the configured channels' (an unconfigured channel's sender has no role to act as).
      const sqs = new Map(channels.map((channel) => [channel, pollerClient(channel)] as const));
      const handlers: Record<Channel, SqsHandler> = { email: sendEmail, sms: sendSms };
      const queues = options.queues();
      const batchMaxOf = (channel: Channel) => senders.find((r) => r.channel === channel)?.batchMax ?? 1;
      const config = readConfig(context.env);
      const sources = [
        ...CHANNELS.map((channel) => ({ ...queues[channel], channel, lane: 'standard' as const })),
        ...(options.lanes?.() ?? []),
      ].filter((queue) => options.senders.includes(queue.channel) && channels.includes(queue.channel));
      const pollers: SqsEventSource[] = sources.map((queue) => {
        // A sender that sends batches gets as many records as one provider call takes (the
        // CDK does the same: lib/stacks/delivery-stack.ts `emailEventSource`).
        const batchMax = batchMaxOf(queue.channel);
        const channelSource = {
          batchSize: Math.max(batchMax, 10),
          maxConcurrency: options.concurrency,
        };
        // The lower lanes' records in flight are capped from the rate, as in the CDK stack.
        const source = laneEventSource(
          queue.lane,
          channelSource,
          config[CHANNEL_SETTINGS[queue.channel].sendRate],
          batchMax,
        );
        return startSqsEventSource({
          client: sqs.get(queue.channel) as SQSClient,
          queueUrl: queue.url,
          queueArn: queue.arn,
          region,
          functionName: `notice-ledger-send-${queue.channel}`,
          handler: handlers[queue.channel],
          functionTimeoutMs: options.functionTimeoutMs,
          concurrency: source.maxConcurrency,
          batchSize: source.batchSize,
          log,
        });
      });
      // The watch queue, polled as the watch function's role (its event source mapping's).
      const watchClient = options.iam.adopt(
        'watch',
        new SQSClient({
          endpoint: context.env.AWS_ENDPOINT_URL_SQS,
          region,
          requestHandler: { connectionTimeout: 2_000, requestTimeout: 10_000 },
        }),
      );
      watchClient.middlewareStack.use(watchJournal.plugin);
      pollers.push(
        startSqsEventSource({
          client: watchClient,
          queueUrl: watchQueue.url,
          queueArn: watchQueue.arn,
          region,
          functionName: 'notice-ledger-watch',
          handler: watchHandler,
          functionTimeoutMs: options.functionTimeoutMs,
          concurrency: 1,
          batchSize: 10,
          log,
        }),
      );
      const reconciler = startPeriodicTask({
        intervalMs: options.reconcileIntervalMs,
        firstRunAfterMs: RECONCILER_FIRST_RUN_MS,
        // The handler takes nothing from EventBridge Scheduler's event: a tick is a tick.
        run: async () => {
          await reconcilerHandler();
        },
        onError: (error) =>
          log(
            `reconciler run failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
          ),
      });
      const feeds = startFeeds(context, options.feeds);

      return {
        describe: `reconciler every ${options.reconcileIntervalMs} ms${feeds.length > 0 ? `; ${feeds.map((f) => f.describe).join('; ')}` : ''}`,
        async stop() {
          for (const feed of feeds) feed.stop();
          const [abandoned] = await Promise.all([
            Promise.all(pollers.map((poller) => poller.stop(POLLER_DRAIN_MS))),
            reconciler.stop(RECONCILER_DRAIN_MS),
          ]);
          const left = abandoned.reduce((sum, n) => sum + n, 0);
          if (left > 0) {
            log(
              `${left} event-source worker(s) still busy after ${POLLER_DRAIN_MS} ms; rows they hold will see their leases expire`,
            );
          }
          for (const client of sqs.values()) client.destroy();
          watchClient.destroy();
          addAwsClientPlugin(undefined);
        },
      };
    },
  };
}

function startFeeds(
  context: StackContext,
  feeds: FunctionsOptions['feeds'],
): { stop(): void; readonly describe: string }[] {
  const deliver = (event: EventBridgeEvent<string, unknown>) => providerEvents(event);
  return feeds.flatMap(({ provider, started }) => {
    const feed = provider.feed?.({ ...context, started }, deliver);
    return feed ? [feed] : [];
  });
}
