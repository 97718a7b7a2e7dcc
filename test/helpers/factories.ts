import type { SQSRecord } from 'aws-lambda';
import type { Channel } from '../../lambdas/domain/channel.ts';
import { resolveDestination } from '../../lambdas/domain/destination.ts';
import { contentDigest, deriveNoticeId, variableDigests } from '../../lambdas/domain/identity.ts';
import { createIntent, type Intent, type LedgerTiming } from '../../lambdas/domain/intent.ts';

export const TEST_KEY = new Uint8Array(Buffer.from('0123456789abcdef0123456789abcdef'));
export const TEST_TIMING: LedgerTiming = { leaseMs: 60_000 };
export const T0 = Date.parse('2026-11-30T10:00:00Z');

let counter = 0;

/** A fresh reserved intent; every call gets a distinct event id unless one is given. */
export function newIntent(
  overrides: Partial<{
    eventId: string;
    channel: Channel;
    variables: Record<string, unknown>;
    templateVersion: string;
    destination: string;
    createdAt: number;
    deadline: number;
  }> = {},
): Intent {
  counter += 1;
  const channel = overrides.channel ?? 'email';
  const eventId = overrides.eventId ?? `evt_${process.pid}_${counter}_${Math.random().toString(36).slice(2)}`;
  const destination = resolveDestination(
    TEST_KEY,
    channel,
    overrides.destination ?? (channel === 'email' ? 'patient@example.com' : '+15551234567'),
  );
  const templateVersion = overrides.templateVersion ?? 'v3';
  const createdAt = overrides.createdAt ?? T0;
  return createIntent(
    {
      noticeId: deriveNoticeId('lab-result-ready', eventId, 'pat_1042'),
      channel,
      eventId,
      eventType: 'lab-result-ready',
      recipientId: 'pat_1042',
      templateId: 'lab-result-ready',
      templateVersion,
      contentDigest: contentDigest(TEST_KEY, {
        templateId: 'lab-result-ready',
        templateVersion,
        variables: overrides.variables ?? { firstName: 'Ada' },
        destinationFingerprint: destination.fingerprint,
      }),
      variableDigests: variableDigests(TEST_KEY, overrides.variables ?? { firstName: 'Ada' }),
      destination: { fingerprint: destination.fingerprint, masked: destination.masked },
      createdAt,
      deadline: overrides.deadline ?? createdAt + 86_400_000,
      envelope: 'sealed-envelope-placeholder',
    },
    TEST_TIMING,
  );
}

/** An SQS record as Lambda's event source hands it to a handler (first receive). */
export function sqsRecord(messageId: string, body: string): SQSRecord {
  return {
    messageId,
    body,
    receiptHandle: `rh-${messageId}`,
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: '0',
      SenderId: 'test',
      ApproximateFirstReceiveTimestamp: '0',
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:notice-ledger-email',
    awsRegion: 'us-east-1',
  };
}
