/**
 * SqsBacklogProbe on local SQS: what the deadline-risk estimate of test/use-cases/deadline-risk.test.ts
 * reads in AWS (the integration tier: it starts local SQS).
 */
import { CreateQueueCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { MemoryRateClock } from '../../lambdas/adapters/memory/memory-rate-clock.ts';
import { SqsBacklogProbe } from '../../lambdas/adapters/sqs/sqs-backlog-probe.ts';
import { useLocalSqs } from '../helpers/sqs.ts';

describe('SqsBacklogProbe on local SQS', () => {
  const client = useLocalSqs();

  const fill = async (name: string, count: number) => {
    const url = (await client().send(new CreateQueueCommand({ QueueName: name }))).QueueUrl as string;
    for (let i = 0; i < count; i += 10) {
      await client().send(
        new SendMessageBatchCommand({
          QueueUrl: url,
          Entries: Array.from({ length: Math.min(10, count - i) }, (_, j) => ({
            Id: String(j),
            MessageBody: '{}',
          })),
        }),
      );
    }
    return url;
  };

  it('counts each lane and the lanes above it, a shared queue once, the budget clock, and what this process enqueued since', async () => {
    const [standard, critical, bulk] = [
      await fill('probe-sms', 30),
      await fill('probe-sms-critical', 2),
      await fill('probe-sms-bulk', 50),
    ];
    const clock = new MemoryRateClock();
    await clock.restart('sms', 7_000_000, 0);
    let now = 1_000;
    const probe = new SqsBacklogProbe({
      sqs: client(),
      queueUrls: { sms: standard },
      laneUrls: { sms: { critical, bulk } },
      ratePerSecond: { sms: 25 },
      clock,
      now: () => now,
    });
    expect(await probe.read('sms')).toEqual({
      ratePerSecond: 25,
      ahead: { critical: 2, standard: 32, bulk: 82 },
      clockMs: 7_000,
    });
    probe.enqueued('sms', 'critical', 3);
    expect((await probe.read('sms'))?.ahead).toEqual({ critical: 5, standard: 35, bulk: 85 });
    expect(await probe.read('email')).toBeUndefined();

    // One lane: every priority waits behind the whole channel queue, counted once.
    const single = new SqsBacklogProbe({
      sqs: client(),
      queueUrls: { sms: standard },
      ratePerSecond: { sms: 25 },
      now: () => now,
    });
    expect((await single.read('sms'))?.ahead).toEqual({ critical: 30, standard: 30, bulk: 30 });
    now += 1_000;
    expect((await probe.read('sms'))?.ahead).toEqual({ critical: 2, standard: 32, bulk: 82 });
  });
});
