/**
 * What the functions write to CloudWatch Logs per channel sent and per provider report, counted
 * as the bench counts it (bench/cost-run.ts: the bytes of the stack's stdout, Powertools' JSON
 * lines and EMF metrics; docs/cost.md prices them): bounds that a field added to every line, or a
 * second line per message, overruns. Each request still gets its one line that says what happened.
 */
import type { Context, SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { intentMessageBody } from '../../lambdas/adapters/sqs/sqs-intent-queue.ts';
import { channelSenderHandler } from '../../lambdas/handlers/channel-sender.ts';
import type { IntentRef } from '../../lambdas/ports/intent-queue.port.ts';
import { deliverIntent } from '../../lambdas/use-cases/deliver.ts';
import { submitNotice } from '../../lambdas/use-cases/submit-notice.ts';
import { sesEventsFor } from '../../local/ses/event-feeder.ts';
import { sqsRecord } from '../helpers/factories.ts';
import { EXAMPLE_REQUEST, fakeWorld } from '../helpers/fakes.ts';
import { harness, SID, twilioCallback } from '../helpers/http-harness.ts';

/**
 * Bytes, a little above what this test measures: 248 per SMS sent (its delivery step, 1/8 of the
 * invocation's EMF line), 280 per Twilio callback, 225 per SES event; before Powertools'
 * repeated fields (`service`, `sampling_rate`) and the first attempt's `attempt` left the lines:
 * 304, 327 and 294.
 */
const BOUNDS = { perSmsSent: 255, perTwilioCallback: 290, perSesEvent: 235 } as const;

const written: string[] = [];
const realWrite = process.stdout.write;

/** Runs `act` with stdout captured (nothing reaches the terminal); the lines it wrote. */
async function capture(act: () => Promise<unknown>): Promise<string[]> {
  written.length = 0;
  process.stdout.write = ((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  try {
    await act();
  } finally {
    process.stdout.write = realWrite;
  }
  return written.join('').split('\n').filter(Boolean);
}

const bytes = (lines: readonly string[]) => lines.reduce((n, l) => n + Buffer.byteLength(`${l}\n`), 0);
const logLines = (lines: readonly string[], message: string) =>
  lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.message === message);

/** `count` notices to one channel, reserved on a fresh ledger: their references. */
async function reserved(channel: 'email' | 'sms', count: number) {
  const world = fakeWorld();
  const refs: IntentRef[] = [];
  for (let i = 0; i < count; i++) {
    const result = await submitNotice(
      {
        ...EXAMPLE_REQUEST,
        eventId: `evt_log_${i}`,
        recipient: { ...EXAMPLE_REQUEST.recipient, id: `pat_${i}` },
        channels: [channel],
      },
      world.deps,
    );
    if (result.kind !== 'recorded') throw new Error(result.kind);
    refs.push({ noticeId: result.noticeId, channel });
  }
  return { world, refs };
}

afterEach(() => {
  process.stdout.write = realWrite;
});

describe('log bytes per notice', () => {
  it(`a sender: one short line per message, at most ${BOUNDS.perSmsSent} B per SMS with the invocation's metrics`, async () => {
    const { world, refs } = await reserved('sms', 8);
    const handler = channelSenderHandler('sms', async () => ({ deps: world.deps, batchMax: 1 }));

    const lines = await capture(() =>
      handler(
        { Records: refs.map((ref, i) => sqsRecord(`m${i}`, intentMessageBody(ref))) } as SQSEvent,
        {} as Context,
      ),
    );

    const steps = logLines(lines, 'delivery step');
    expect(steps.map((s) => s.noticeId)).toEqual(refs.map((r) => r.noticeId));
    for (const step of steps)
      expect(step).toMatchObject({
        level: 'INFO',
        channel: 'sms',
        result: { kind: 'recorded', state: 'accepted' },
      });
    expect(bytes(lines) / refs.length).toBeLessThanOrEqual(BOUNDS.perSmsSent);
  });

  it(`a Twilio status callback: its request line, at most ${BOUNDS.perTwilioCallback} B`, async () => {
    const { world, refs } = await reserved('sms', 1);
    const [ref] = refs as [IntentRef];
    world.sms.script.push({ kind: 'accepted', receiptId: SID });
    await deliverIntent(ref, world.deps);
    const h = harness({ store: world.store });
    const delivered = {
      AccountSid: 'AC_test',
      MessageSid: SID,
      MessageStatus: 'delivered',
      To: '+15551234567',
    };

    const lines = await capture(() => h.call(twilioCallback(delivered, { ref: `${ref.noticeId}-sms` })));

    expect(logLines(lines, 'http request')).toEqual([
      expect.objectContaining({
        status: 200,
        noticeId: ref.noticeId,
        provider: 'twilio',
        results: ['applied:delivered'],
      }),
    ]);
    expect(bytes(lines)).toBeLessThanOrEqual(BOUNDS.perTwilioCallback);
  });

  it(`an SES event: its line, at most ${BOUNDS.perSesEvent} B`, async () => {
    const { world, refs } = await reserved('email', 1);
    const [ref] = refs as [IntentRef];
    await deliverIntent(ref, world.deps);
    const row = await world.store.get(ref.noticeId, 'email');
    const [delivery] = sesEventsFor({
      messageId: row?.providerReceiptId ?? '',
      from: 'notices@example.com',
      replyTo: [],
      destination: { to: ['patient@example.com'], cc: [], bcc: [] },
      subject: 's',
      body: { text: 't' },
      headers: [{ name: 'X-Notice-Intent', value: `${ref.noticeId}-email` }],
      at: Math.floor(world.clock.now() / 1000),
    });
    if (!delivery) throw new Error('no event');
    const h = harness({ store: world.store });

    const lines = await capture(() => h.events(delivery));

    expect(logLines(lines, 'provider event')).toEqual([
      expect.objectContaining({ provider: 'ses', noticeId: ref.noticeId, results: ['applied:delivered'] }),
    ]);
    expect(bytes(lines)).toBeLessThanOrEqual(BOUNDS.perSesEvent);
  });
});
