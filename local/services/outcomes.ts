import { join } from 'node:path';
import { SQSClient } from '@aws-sdk/client-sqs';
import { LEDGER_STREAM_FILTERS, passesLedgerStreamFilters } from '../../lambdas/contract/ledger-stream.ts';
import { useAwsClientPlugin } from '../../lambdas/wiring/aws-clients.ts';
import { type LocalEventBus, startLocalEventBus } from '../event-bus/server.ts';
import type { LocalIam } from '../iam/enforce.ts';
import type { LocalService } from '../service.ts';
import { startSqsEventSource } from '../sqs-event-source.ts';
import { type SqsJournal, sqsJournal } from '../sqs-journal.ts';
import { createQueueWithDeadLetters } from './queues.ts';
import { startLedgerStreamConsumer } from './stream-consumer.ts';

/** The bus the stream consumer publishes to locally (OUTCOME_EVENT_BUS unless set). */
export const LOCAL_OUTCOME_BUS = 'notice-ledger-outcomes';

/** What the console and `notice-ledger events` read: the bus stand-in's events. */
let bus: LocalEventBus | undefined;
/** The webhook queue's journal (../sqs-journal.ts), for the pollers' client. */
let journal: SqsJournal | undefined;
export function localOutcomeBus(): LocalEventBus | undefined {
  return bus;
}

/**
 * Before the functions: the outcome bus stand-in (./../event-bus/server.ts), and, with
 * OUTCOME_WEBHOOK_URL, the webhook queue and its dead-letter queue (one receive per attempt of
 * OUTCOME_WEBHOOK_RETRY_SCHEDULE_MS, then the DLQ, as the CDK's queue). They are the variables the
 * two functions' runtimes read.
 */
export function outcomeBusService(iam: LocalIam): LocalService {
  return {
    name: 'outcomes',
    async start({ env, dataDir, region, log }) {
      bus = await startLocalEventBus({ file: join(dataDir, 'outcome-events.jsonl') });
      const started = bus;
      const vars: Record<string, string> = {
        AWS_ENDPOINT_URL_EVENTBRIDGE: env.AWS_ENDPOINT_URL_EVENTBRIDGE || started.endpoint,
        OUTCOME_EVENT_BUS: env.OUTCOME_EVENT_BUS || LOCAL_OUTCOME_BUS,
      };
      const sqs = new SQSClient({ endpoint: env.AWS_ENDPOINT_URL_SQS, region });
      try {
        if (env.OUTCOME_WEBHOOK_URL) {
          const queue = await createQueueWithDeadLetters(
            sqs,
            'notice-ledger-outcome-webhooks',
            { VisibilityTimeout: '60' },
            log,
          );
          vars.OUTCOME_WEBHOOK_DLQ_URL = env.OUTCOME_WEBHOOK_DLQ_URL || queue.dlqUrl;
          vars.OUTCOME_WEBHOOK_DLQ_ARN = env.OUTCOME_WEBHOOK_DLQ_ARN || queue.dlqArn;
          vars.OUTCOME_WEBHOOK_QUEUE_URL = env.OUTCOME_WEBHOOK_QUEUE_URL || queue.url;
          vars.OUTCOME_WEBHOOK_QUEUE_ARN = env.OUTCOME_WEBHOOK_QUEUE_ARN || queue.arn;
        }
        // The webhook queue survives a restart, as SQS's would (../sqs-journal.ts).
        journal = sqsJournal(
          join(dataDir, 'outcome-webhooks.journal'),
          () => process.env.OUTCOME_WEBHOOK_QUEUE_URL,
        );
        const journaled = journal;
        useAwsClientPlugin((fn) => {
          const own = iam.plugin(fn);
          return fn === 'outcomeStream' || fn === 'outcomeWebhooks'
            ? {
                applyToStack(stack) {
                  own.applyToStack(stack);
                  journaled.plugin.applyToStack(stack);
                },
              }
            : own;
        });
        if (vars.OUTCOME_WEBHOOK_QUEUE_URL) {
          process.env.OUTCOME_WEBHOOK_QUEUE_URL = vars.OUTCOME_WEBHOOK_QUEUE_URL;
          sqs.middlewareStack.use(journaled.plugin);
          const replayed = await journaled.replay(sqs);
          if (replayed > 0)
            log(`outcome webhooks: ${replayed} owed webhook(s) queued again after the restart`);
        }
      } finally {
        sqs.destroy();
      }
      return {
        env: vars,
        endpoint: started.endpoint,
        describe: `bus ${vars.OUTCOME_EVENT_BUS} (local EventBridge stand-in)${env.OUTCOME_WEBHOOK_URL ? `; signed webhooks to ${env.OUTCOME_WEBHOOK_URL}` : ''}`,
        async stop() {
          await started.close();
          bus = undefined;
        },
      };
    },
  };
}

/**
 * After the functions: the stream consumer on DynamoDB Local's change stream (as the outcome-stream
 * function's role, as Lambda's mapping polls), and with a webhook URL the signing sender on the
 * webhook queue (as its role).
 */
export function outcomeConsumersService(iam: LocalIam, functionTimeoutMs: number): LocalService {
  return {
    name: 'outcome-consumers',
    async start(context) {
      const { env, region, log } = context;
      const { handler: outcomeStream } = await import('../../lambdas/handlers/outcome-stream.ts');
      const { getOutcomeStreamRuntime } = await import('../../lambdas/wiring/outcomes.ts');
      await getOutcomeStreamRuntime();
      const streamArn = env.LEDGER_TABLE_STREAM_ARN as string;
      // As lib/constructs/outcome-events.ts maps it: intent rows only, batches of 100, bisected on error.
      const stream = await startLedgerStreamConsumer(context, iam, {
        filter: (record) => passesLedgerStreamFilters(LEDGER_STREAM_FILTERS.outcomes, record),
        role: 'outcomeStream',
        name: 'outcome stream',
        handler: outcomeStream,
        checkpointFile: 'outcome-stream-checkpoint.json',
        failureQueue: 'notice-ledger-outcome-stream-failures',
        batchSize: 100,
        bisectOnError: true,
      });
      let webhooks: ReturnType<typeof startSqsEventSource> | undefined;
      let webhookSqs: SQSClient | undefined;
      if (env.OUTCOME_WEBHOOK_URL && env.OUTCOME_WEBHOOK_QUEUE_URL) {
        const { handler: outcomeWebhooks } = await import('../../lambdas/handlers/outcome-webhooks.ts');
        const { getOutcomeWebhooksRuntime } = await import('../../lambdas/wiring/outcomes.ts');
        // A missing or malformed secret stops the start, named (as a cold start would fail).
        await getOutcomeWebhooksRuntime();
        webhookSqs = iam.adopt(
          'outcomeWebhooks',
          new SQSClient({
            endpoint: env.AWS_ENDPOINT_URL_SQS,
            region,
            requestHandler: { connectionTimeout: 2_000, requestTimeout: 10_000 },
          }),
        );
        if (journal) webhookSqs.middlewareStack.use(journal.plugin);
        const url = env.OUTCOME_WEBHOOK_QUEUE_URL;
        webhooks = startSqsEventSource({
          client: webhookSqs,
          queueUrl: url,
          queueArn: `arn:aws:sqs:${region}:000000000000:${url.split('/').pop()}`,
          region,
          functionName: 'notice-ledger-outcome-webhooks',
          handler: outcomeWebhooks,
          functionTimeoutMs,
          concurrency: 4,
          batchSize: 10,
          log,
        });
      }
      return {
        describe: `stream consumer on ${streamArn.split('/stream/')[0]?.split('/').pop()}'s stream${webhooks ? '; webhook sender' : ''}`,
        async stop() {
          await Promise.all([stream.stop(), webhooks?.stop(10_000)]);
          webhookSqs?.destroy();
        },
      };
    },
  };
}
