/**
 * The external contract of docs/architecture.md §6 against the running stack (`npm start`), black-box:
 * batches, a table of malformed requests, forged provider callbacks, and a privacy scan of
 * every ledger item and everything the stack printed.
 */
import { randomBytes } from 'node:crypto';
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeTwilioSignature } from '../../lambdas/providers/twilio/signature.ts';
import { readSesStore } from '../../local/ses/server.ts';
import { type StackProcess, startStackProcess, stopAllStacks } from '../helpers/local-stack.ts';
import {
  getTimeline,
  noticeBody,
  postNotice,
  SENT,
  simulatorMessages,
  testRecipient,
  waitFor,
} from './support.ts';

let stack: StackProcess;
/** Every raw destination and variable value this file sends: none may show up anywhere. */
const secrets = new Set<string>();

function recipient() {
  const r = testRecipient();
  secrets.add(r.email);
  secrets.add(r.phone);
  secrets.add(r.phone.slice(1));
  return r;
}

function body(overrides: Record<string, unknown> = {}, firstName = `Zelda${randomBytes(3).toString('hex')}`) {
  secrets.add(firstName);
  const { email, phone } = recipient();
  return {
    ...noticeBody({
      eventId: `evt_${randomBytes(6).toString('hex')}`,
      email,
      phone,
      variables: { firstName },
    }),
    ...overrides,
  };
}

async function send(
  path: string,
  init: RequestInit,
): Promise<{ status: number; type: string | null; text: string }> {
  const response = await fetch(`${stack.apiUrl}${path}`, { ...init, signal: AbortSignal.timeout(15_000) });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

const postJson = (path: string, value: unknown) =>
  send(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(value),
  });

beforeAll(async () => {
  stack = await startStackProcess();
});

afterAll(async () => {
  await stopAllStacks();
});

describe('batch', () => {
  it('one invalid item among valid ones: per-item statuses, and the valid ones are sent', async () => {
    const valid = [body(), body(), body()];
    const invalid = { ...body(), channels: ['email', 'email'] };
    const response = await postJson('/v1/notices/batch', {
      notices: [valid[0], invalid, valid[1], valid[2]],
    });
    expect(response.status).toBe(200);
    const { results } = JSON.parse(response.text) as {
      results: { index: number; status: number; noticeId?: string }[];
    };
    expect(results.map((r) => [r.index, r.status])).toEqual([
      [0, 202],
      [1, 400],
      [2, 202],
      [3, 202],
    ]);
    for (const result of results.filter((r) => r.status === 202)) {
      await waitFor(`notice ${result.noticeId} sent`, async () => {
        const timeline = await getTimeline(stack.apiUrl, result.noticeId as string);
        return timeline.channels.every((c) => SENT.has(c.state)) ? true : undefined;
      });
    }
  });
});

describe('malformed requests', () => {
  const past = new Date(Date.now() - 60_000).toISOString();
  const cases: [string, () => Promise<{ status: number; type: string | null; text: string }>, number][] = [
    [
      'not JSON',
      () =>
        send('/v1/notices', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"eventId":',
        }),
      400,
    ],
    ['a JSON array', () => postJson('/v1/notices', [body()]), 400],
    ['missing eventId', () => postJson('/v1/notices', { ...body(), eventId: undefined }), 400],
    [
      'eventId with a control character',
      () => postJson('/v1/notices', body({ eventId: 'evt\u0007bell' })),
      400,
    ],
    ['eventId of 129 characters', () => postJson('/v1/notices', body({ eventId: 'e'.repeat(129) })), 400],
    ['empty channels', () => postJson('/v1/notices', body({ channels: [] })), 400],
    ['repeated channel', () => postJson('/v1/notices', body({ channels: ['sms', 'sms'] })), 400],
    ['unknown channel', () => postJson('/v1/notices', body({ channels: ['fax'] })), 400],
    [
      'email channel without an email',
      () => postJson('/v1/notices', body({ recipient: { id: 'pat_1', phone: '+15550001111' } })),
      400,
    ],
    [
      'phone not in E.164',
      () =>
        postJson(
          '/v1/notices',
          body({ recipient: { id: 'pat_1', email: 'a@example.com', phone: '555-1234' } }),
        ),
      400,
    ],
    ['deadline in the past', () => postJson('/v1/notices', body({ deadline: past })), 422],
    ['deadline not a date', () => postJson('/v1/notices', body({ deadline: 'tomorrow' })), 422],
    [
      'unknown template',
      () => postJson('/v1/notices', body({ template: { id: 'no-such-template', version: 'v1' } })),
      422,
    ],
    [
      'unknown version',
      () => postJson('/v1/notices', body({ template: { id: 'lab-result-ready', version: 'v99' } })),
      422,
    ],
    ['missing firstName', () => postJson('/v1/notices', body({ variables: {} })), 422],
    [
      'firstName of the wrong type',
      () => postJson('/v1/notices', body({ variables: { firstName: 42 } })),
      422,
    ],
    [
      'portalUrl not https',
      () =>
        postJson(
          '/v1/notices',
          body({ variables: { firstName: 'Ada', portalUrl: 'http://portal.example.com' } }),
        ),
      422,
    ],
    [
      'unknown variable',
      () => postJson('/v1/notices', body({ variables: { firstName: 'Ada', diagnosis: 'secret' } })),
      422,
    ],
    ['body over 256 KiB', () => postJson('/v1/notices', body({ padding: 'x'.repeat(300 * 1024) })), 413],
    [
      'text/plain',
      () =>
        send('/v1/notices', {
          method: 'POST',
          headers: { 'content-type': 'text/plain' },
          body: JSON.stringify(body()),
        }),
      415,
    ],
    [
      'deeply nested JSON',
      () =>
        postJson('/v1/notices', body({ variables: JSON.parse(`${'{"a":'.repeat(40)}1${'}'.repeat(40)}`) })),
      400,
    ],
    [
      'batch of 101',
      () => postJson('/v1/notices/batch', { notices: Array.from({ length: 101 }, () => body()) }),
      400,
    ],
    ['batch without an array', () => postJson('/v1/notices/batch', { notices: 'all of them' }), 400],
    ['timeline of a malformed id', () => send('/v1/notices/not-an-id', { method: 'GET' }), 400],
    [
      'suppression for an unknown channel',
      () => send('/v1/suppressions/fax/%2B15551234567', { method: 'GET' }),
      400,
    ],
    ['suppression for a malformed phone', () => send('/v1/suppressions/sms/12345', { method: 'PUT' }), 400],
    ['unknown route', () => send('/v1/nothing-here', { method: 'GET' }), 404],
    ['wrong method', () => send('/v1/notices', { method: 'DELETE' }), 405],
  ];

  it.each(cases)('%s → 4xx problem+json with field paths', async (_name, request, status) => {
    const response = await request();
    expect(response.status).toBe(status);
    expect(response.type).toMatch(/^application\/problem\+json/);
    const problem = JSON.parse(response.text) as {
      type: string;
      title: string;
      status: number;
      errors?: { path: string }[];
    };
    expect(problem.status).toBe(status);
    expect(problem.title).toEqual(expect.any(String));
    if (status === 400 || status === 422) {
      if (problem.errors) for (const error of problem.errors) expect(error.path).toEqual(expect.any(String));
    }
    for (const secret of secrets) expect(response.text).not.toContain(secret);
  });

  it('the service keeps working after all of them', async () => {
    expect((await send('/v1/health', { method: 'GET' })).status).toBe(200);
    const created = await postNotice(stack.apiUrl, body());
    expect(created.status).toBe(202);
  });
});

describe('conflict', () => {
  it('the same event with changed variables is 409 and the recorded intent is unchanged', async () => {
    const original = body();
    const first = await postNotice(stack.apiUrl, original);
    expect(first.status).toBe(202);
    const changed = await postNotice(stack.apiUrl, { ...original, variables: { firstName: 'Somebody' } });
    expect(changed.status).toBe(409);
    expect(changed.contentType).toMatch(/problem\+json/);
    const replay = await postNotice(stack.apiUrl, original);
    expect(replay.status).toBe(200);
  });
});

describe('Twilio status callbacks', () => {
  it('a forged or missing signature is refused with 403 and changes nothing', async () => {
    const notice = body();
    const created = await postNotice(stack.apiUrl, notice);
    const noticeId = created.json.noticeId as string;
    await waitFor('sms accepted', async () => {
      const timeline = await getTimeline(stack.apiUrl, noticeId);
      return timeline.channels.find((c) => c.channel === 'sms' && SENT.has(c.state));
    });
    const before = await getTimeline(stack.apiUrl, noticeId);
    const sms = before.channels.find((c) => c.channel === 'sms');
    const path = `/v1/provider-events/twilio?ref=${noticeId}-sms`;
    const params = {
      MessageSid: sms?.providerReceiptId as string,
      MessageStatus: 'undelivered',
      ErrorCode: '30005',
      AccountSid: 'AC00000000000000000000000000000000',
    };
    const form = new URLSearchParams(params).toString();
    const headers = { 'content-type': 'application/x-www-form-urlencoded' };
    const forged = computeTwilioSignature('not-the-token', `${stack.apiUrl}${path}`, params);
    expect(
      (
        await send(path, {
          method: 'POST',
          headers: { ...headers, 'x-twilio-signature': forged },
          body: form,
        })
      ).status,
    ).toBe(403);
    expect((await send(path, { method: 'POST', headers, body: form })).status).toBe(403);
    const after = await getTimeline(stack.apiUrl, noticeId);
    const smsAfter = after.channels.find((c) => c.channel === 'sms');
    expect(smsAfter?.state).not.toBe('failed');
    expect(smsAfter?.transitions.map((t) => t.reason)).not.toContain('delivery_failed');
  });
});

describe('privacy', () => {
  it('no raw address, phone number or variable value in any ledger item or in the stack output', async () => {
    // Let in-flight work settle so the scan sees rows in every state we produced.
    await new Promise((r) => setTimeout(r, 1500));
    const client = new DynamoDBClient({
      endpoint: stack.state.endpoints.dynamodb,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const items: string[] = [];
    let startKey: Record<string, never> | undefined;
    for (let page = 0; page < 100; page++) {
      const out = await client.send(
        new ScanCommand({ TableName: stack.state.tableName, ExclusiveStartKey: startKey }),
      );
      for (const item of out.Items ?? []) items.push(JSON.stringify(item));
      startKey = out.LastEvaluatedKey as Record<string, never> | undefined;
      if (!startKey) break;
    }
    client.destroy();
    expect(items.length).toBeGreaterThan(10);
    // The providers did receive the real values: the scan would catch them if they leaked.
    const mail = JSON.stringify(await readSesStore(stack.state.endpoints.sesv2));
    const sms = JSON.stringify(await simulatorMessages(stack.state.endpoints.twilio));
    const leakedToProvidersAsExpected = [...secrets].filter((s) => mail.includes(s) || sms.includes(s));
    expect(leakedToProvidersAsExpected.length).toBeGreaterThan(5);

    const output = stack.output();
    expect(output.length).toBeGreaterThan(1000);
    const findings: string[] = [];
    for (const secret of secrets) {
      for (const item of items)
        if (item.includes(secret)) findings.push(`ledger item contains a raw value (${secret.length} chars)`);
      if (output.includes(secret))
        findings.push(`stack output contains a raw value (${secret.length} chars)`);
    }
    expect(findings).toEqual([]);
  });
});
