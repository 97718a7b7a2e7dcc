/**
 * `startLocalStack` hosted by the test process itself (no child process): the form to use
 * when a test needs the simulator's fault controls or the stack's handles directly. One stack
 * per process (the runtime is cached per process), so one per test file.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { SmsSimulator } from '../../local/sms-simulator/server.ts';
import { type LocalStack, READY_LINE, startLocalStack } from '../../local/stack.ts';
import { uniqueTableName } from '../helpers/dynamodb.ts';
import { getTimeline, noticeBody, postNotice, SENT, testRecipient, waitFor } from './support.ts';

let stack: LocalStack;
let dataDir: string;
const logged: string[] = [];

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'notice-ledger-inproc-'));
  stack = await startLocalStack(
    {
      PORT: '0',
      LEDGER_DATA_DIR: dataDir,
      AWS_ENDPOINT_URL_DYNAMODB: inject('ddbEndpoint'),
      LEDGER_TABLE_NAME: uniqueTableName('inproc'),
      // The handlers' JSON logs and metrics would drown the test report.
      POWERTOOLS_LOG_LEVEL: 'ERROR',
      POWERTOOLS_METRICS_DISABLED: 'true',
    },
    { log: (line) => logged.push(line) },
  );
});

afterAll(async () => {
  await stack?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('startLocalStack in-process', () => {
  it('serves the API and exposes handles for tests', async () => {
    // Prepare
    expect(stack.banner.at(-1)).toBe(READY_LINE);
    expect(stack.started).toEqual({ dynamodb: false, sqs: true, sesv2: true, s3: true, twilio: true });
    expect(stack.endpoints.dynamodb).toBe(inject('ddbEndpoint'));
    const sms = stack.simulators.twilio as SmsSimulator | undefined;
    expect(sms?.baseUrl).toBe(stack.endpoints.twilio);
    expect(stack.providers).toEqual({ email: 'ses', sms: 'twilio' });
    const { email, phone } = testRecipient();

    // Act
    const created = await postNotice(
      stack.apiUrl,
      noticeBody({ eventId: `evt_inproc_${Date.now()}`, email, phone }),
    );
    const noticeId = created.json.noticeId as string;
    await waitFor('both channels sent', async () => {
      const timeline = await getTimeline(stack.apiUrl, noticeId);
      return timeline.channels.every((c) => SENT.has(c.state)) ? timeline : undefined;
    });

    // Assess
    expect(created.status).toBe(202);
    expect(sms?.messages().filter((m) => m.to === phone)).toHaveLength(1);
    expect(logged.join('\n')).not.toContain(email);
    // The reconciler and the SES event feed were found and ran without complaint.
    expect(logged.filter((line) => /failed|not available|skipped|threw/.test(line))).toEqual([]);
  });

  it('refuses a second stack in the same process', async () => {
    await expect(startLocalStack({ PORT: '0' })).rejects.toThrow(/once per process/);
  });
});
