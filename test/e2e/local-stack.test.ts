/**
 * Black-box tests of `npm start` (local/start.ts) through HTTP only: one stack for the file,
 * on the test run's shared DynamoDB Local with a table of its own.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSesStore } from '../../local/ses/server.ts';
import {
  localIamReport,
  type StackProcess,
  startStackProcess,
  stopAllStacks,
} from '../helpers/local-stack.ts';
import {
  assertWellFormed,
  getTimeline,
  noticeBody,
  postNotice,
  SENT,
  simulatorMessages,
  type Timeline,
  testRecipient,
  waitFor,
} from './support.ts';

let stack: StackProcess;
let startupMs = 0;

beforeAll(async () => {
  const startedAt = Date.now();
  stack = await startStackProcess();
  startupMs = Date.now() - startedAt;
});

afterAll(async () => {
  await stopAllStacks();
});

async function emailsTo(address: string): Promise<{ messageId: string }[]> {
  const emails = await readSesStore(stack.state.endpoints.sesv2);
  return emails.filter((email) => email.destination.to.includes(address));
}

async function smsTo(phone: string): Promise<{ sid: string; status: string }[]> {
  return (await simulatorMessages(stack.state.endpoints.twilio)).filter((message) => message.to === phone);
}

/** Until every channel left reserved/sending (accepted, delivered or anything final). */
function untilSent(noticeId: string, timeoutMs = 20_000): Promise<Timeline> {
  return waitFor(
    `notice ${noticeId} to be sent on every channel`,
    async () => {
      const timeline = await getTimeline(stack.apiUrl, noticeId);
      return timeline.channels.every((c) => SENT.has(c.state)) ? timeline : undefined;
    },
    { timeoutMs },
  );
}

describe('local stack (npm start) through HTTP', () => {
  it('starts, answers health, and sends the docs/architecture.md §6 example on both channels', async () => {
    console.info(`local stack start-up (spawn to ready line): ${startupMs} ms`);
    // Prepare
    const health = await fetch(`${stack.apiUrl}/v1/health`);
    expect(health.status).toBe(200);
    const { email, phone } = testRecipient();
    const body = noticeBody({ eventId: `evt_${randomBytes(6).toString('hex')}`, email, phone });

    // Act
    const postedAt = Date.now();
    const created = await postNotice(stack.apiUrl, body);
    expect(created.status).toBe(202);
    const noticeId = created.json.noticeId as string;
    const sent = await untilSent(noticeId);
    console.info(`POST → both channels accepted/delivered: ${Date.now() - postedAt} ms`);

    // Assess: the SMS status callback moves the row to delivered.
    const final = await waitFor(
      'the SMS callback to mark the sms channel delivered',
      async () => {
        const timeline = await getTimeline(stack.apiUrl, noticeId);
        return timeline.channels.find((c) => c.channel === 'sms')?.state === 'delivered'
          ? timeline
          : undefined;
      },
      { timeoutMs: 10_000 },
    );
    for (const channel of sent.channels) {
      expect(channel.transitions.slice(0, 3).map((t) => [t.from, t.to, t.reason])).toEqual([
        [null, 'reserved', 'intake'],
        ['reserved', 'sending', 'claimed'],
        ['sending', 'accepted', 'provider_accepted'],
      ]);
    }
    for (const channel of final.channels) {
      expect(assertWellFormed(channel.transitions), channel.channel).toEqual([]);
    }

    const emailChannel = final.channels.find((c) => c.channel === 'email');
    const smsChannel = final.channels.find((c) => c.channel === 'sms');
    expect(emailChannel?.destination.masked).toMatch(/^s\*+[a-z0-9]@simulator\.amazonses\.com$/);
    expect(smsChannel?.destination.masked).toMatch(/^\+1\*+\d{4}$/);
    // Raw destinations never leave the system: not in the timeline, not in the logs.
    const raw = JSON.stringify(final);
    expect(raw).not.toContain(email);
    expect(raw).not.toContain(phone.slice(1));
    expect(stack.output()).not.toContain(email);
    expect(stack.output()).not.toContain(phone.slice(1));

    const mails = await emailsTo(email);
    expect(mails).toHaveLength(1);
    expect(mails[0]?.messageId).toBe(emailChannel?.providerReceiptId);
    const texts = await smsTo(phone);
    expect(texts).toHaveLength(1);
    expect(texts[0]?.sid).toBe(smsChannel?.providerReceiptId);
  });

  it('20 concurrent identical POSTs: one 202, nineteen 200, one email and one SMS', async () => {
    // Prepare
    const { email, phone } = testRecipient();
    const body = noticeBody({ eventId: `evt_${randomBytes(6).toString('hex')}`, email, phone });

    // Act
    const answers = await Promise.all(Array.from({ length: 20 }, () => postNotice(stack.apiUrl, body)));

    // Assess
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(19);
    const ids = new Set(answers.map((a) => a.json.noticeId));
    expect(ids.size).toBe(1);
    const noticeId = [...ids][0] as string;
    await untilSent(noticeId);
    // A duplicate send would race the first one; give it time to show up before counting.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await emailsTo(email)).toHaveLength(1);
    expect(await smsTo(phone)).toHaveLength(1);
  });

  it('answers 409 when the same event comes back with other variables', async () => {
    // Prepare
    const { email, phone } = testRecipient();
    const eventId = `evt_${randomBytes(6).toString('hex')}`;
    const first = await postNotice(stack.apiUrl, noticeBody({ eventId, email, phone }));
    expect(first.status).toBe(202);

    // Act
    const changed = await postNotice(
      stack.apiUrl,
      noticeBody({ eventId, email, phone, variables: { firstName: 'Grace' } }),
    );

    // Assess
    expect(changed.status).toBe(409);
    expect(changed.contentType).toMatch(/^application\/problem\+json/);
    const timeline = await getTimeline(stack.apiUrl, first.json.noticeId as string);
    expect(timeline.channels.map((c) => c.transitions[0]?.reason)).toEqual(['intake', 'intake']);
  });

  it('refuses a body over 1 MiB at the gateway with 413 problem+json', async () => {
    // Act
    const response = await fetch(`${stack.apiUrl}/v1/notices`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ padding: 'x'.repeat(1024 * 1024 + 10) }),
    });

    // Assess
    expect(response.status).toBe(413);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await response.json()) as { status: number }).status).toBe(413);
    // The stack still serves after cutting that connection.
    expect((await fetch(`${stack.apiUrl}/v1/health`)).status).toBe(200);
  });

  /** The first stack's generated keys and simulator credentials (its local-secrets.json). */
  async function firstStackSecrets() {
    return JSON.parse(await readFile(join(stack.dataDir, 'local-secrets.json'), 'utf8')) as {
      fingerprintKey: string;
      envelopeKey: string;
      twilio: { accountSid: string; authToken: string; from: string };
    };
  }

  /** A second stack's environment that points it at the first one's SQS, SES and SMS simulator. */
  async function sharedServicesEnv(): Promise<Record<string, string>> {
    const { twilio } = await firstStackSecrets();
    const { endpoints } = stack.state;
    return {
      AWS_ENDPOINT_URL_SQS: endpoints.sqs,
      AWS_ENDPOINT_URL_SESV2: endpoints.sesv2,
      AWS_ENDPOINT_URL_S3: endpoints.s3,
      TWILIO_BASE_URL: endpoints.twilio,
      TWILIO_ACCOUNT_SID: twilio.accountSid,
      TWILIO_AUTH_TOKEN: twilio.authToken,
      TWILIO_FROM: twilio.from,
    };
  }

  it('a second stack pointed at the services of the first shares table and queues', async () => {
    // Prepare: same services, same table, same keys (else fingerprints and envelopes differ).
    const secrets = await firstStackSecrets();

    // Act
    const second = await startStackProcess({
      tableName: stack.state.tableName,
      env: {
        ...(await sharedServicesEnv()),
        FINGERPRINT_KEY: secrets.fingerprintKey,
        ENVELOPE_LOCAL_KEY: secrets.envelopeKey,
      },
    });

    // Assess
    expect(second.state.started).toEqual({
      dynamodb: false,
      sqs: false,
      sesv2: false,
      s3: false,
      twilio: false,
    });
    expect(second.state.archiveBucket).toBe(stack.state.archiveBucket);
    expect(second.state.queues.email.url).toBe(stack.state.queues.email.url);
    expect(second.state.queues.sms.url).toBe(stack.state.queues.sms.url);
    const { email, phone } = testRecipient();
    const created = await postNotice(
      second.apiUrl,
      noticeBody({ eventId: `evt_${randomBytes(6).toString('hex')}`, email, phone }),
    );
    expect(created.status).toBe(202);
    // Visible through the first stack: one ledger, whichever stack's poller sent it.
    await untilSent(created.json.noticeId as string);
    expect(await emailsTo(email)).toHaveLength(1);
    expect(await smsTo(phone)).toHaveLength(1);
    expect((await second.stop()).code).toBe(0);
  });

  it("two stacks on one shared backend with their own data dirs: the second uses the table's keys; every notice is delivered once", async () => {
    // Prepare: the second stack shares DynamoDB, SQS, SES and the SMS simulator, but has a data
    // dir of its own (its own freshly generated keys) and is given no keys.
    const second = await startStackProcess({
      tableName: stack.state.tableName,
      env: await sharedServicesEnv(),
    });
    const recipients = Array.from({ length: 6 }, () => testRecipient());

    // Act: notices into both stacks; either stack's workers may send any of them.
    const created = await Promise.all(
      recipients.map(({ email, phone }, i) =>
        postNotice(
          (i % 2 === 0 ? stack : second).apiUrl,
          noticeBody({ eventId: `evt_shared_${randomBytes(6).toString('hex')}`, email, phone }),
        ),
      ),
    );
    const timelines = await Promise.all(created.map((c) => untilSent(c.json.noticeId as string)));

    // Assess
    expect(second.output()).toContain("using the ledger table's keys");
    for (const [i, { email, phone }] of recipients.entries()) {
      expect(created[i]?.status).toBe(202);
      for (const channel of timelines[i]?.channels ?? []) {
        expect(channel.transitions.map((t) => t.reason)).not.toContain('envelope_unreadable');
      }
      expect(await emailsTo(email)).toHaveLength(1);
      expect(await smsTo(phone)).toHaveLength(1);
    }
    expect((await second.stop()).code).toBe(0);
  });

  it('a stack given other keys for a shared table refuses to start, naming the variables', async () => {
    // Act
    const refused = startStackProcess({
      tableName: stack.state.tableName,
      env: {
        AWS_ENDPOINT_URL_SQS: stack.state.endpoints.sqs,
        FINGERPRINT_KEY: randomBytes(32).toString('base64'),
        ENVELOPE_LOCAL_KEY: randomBytes(32).toString('base64'),
      },
      readyTimeoutMs: 60_000,
    });

    // Assess
    await expect(refused).rejects.toThrow(
      /exited \(code 1\)[\s\S]*first used with other keys[\s\S]*FINGERPRINT_KEY and ENVELOPE_LOCAL_KEY/,
    );
  });
});

describe('local IAM (local/iam/)', () => {
  it('every stack of this file ran with IAM enforced, and no AWS call of any function or event source was denied', () => {
    const report = localIamReport();
    expect(report.ready).toBeGreaterThan(0);
    expect(report.enforced).toBe(report.ready);
    expect(report.denials).toEqual([]);
  });
});
