/**
 * SqsIntentQueue on local SQS: the lane routing of test/use-cases/lanes.test.ts, through real
 * queues (the integration tier: it starts local SQS).
 */
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { SqsIntentQueue } from '../../lambdas/adapters/sqs/sqs-intent-queue.ts';
import { parseIntentMessage } from '../../lambdas/edge/intent-message.ts';
import { drain, useLocalSqs } from '../helpers/sqs.ts';

const ref = { noticeId: 'ntc_aaaaaaaaaaaaaaaaaaaaaaaaaa', channel: 'sms' } as const;

describe('lanes: where a reference waits (docs/architecture.md §11)', () => {
  describe('on local SQS', () => {
    const client = useLocalSqs();

    it('one enqueue of mixed lanes sends each reference to its lane queue', async () => {
      const url = async (name: string) =>
        (await client().send(new CreateQueueCommand({ QueueName: name }))).QueueUrl as string;
      const [standard, critical] = [await url('lanes-sms'), await url('lanes-sms-critical')];
      const queue = new SqsIntentQueue(client(), { sms: standard }, { sms: { critical } });
      await queue.enqueue([
        { ...ref, priority: 'critical' },
        { ...ref, noticeId: 'ntc_bbbbbbbbbbbbbbbbbbbbbbbbbb', priority: 'bulk' },
        { ...ref, noticeId: 'ntc_cccccccccccccccccccccccccc' },
      ]);
      const inCritical = await drain(client(), critical, 3_000, 1);
      const inStandard = await drain(client(), standard, 3_000, 2);
      expect(inCritical.map((m) => parseIntentMessage(m.Body ?? '', 'sms'))).toEqual([
        { ...ref, priority: 'critical' },
      ]);
      expect(inStandard.map((m) => parseIntentMessage(m.Body ?? '', 'sms').noticeId).sort()).toEqual([
        'ntc_bbbbbbbbbbbbbbbbbbbbbbbbbb',
        'ntc_cccccccccccccccccccccccccc',
      ]);
    });
  });
});
