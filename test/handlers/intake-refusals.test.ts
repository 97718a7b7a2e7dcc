/**
 * Issue 10's examples, in-process: each refused with its documented status and codes whether
 * API Gateway hands the body over as a string (text content types; invalid bytes then arrive as
 * U+FFFD) or base64-encoded, and none leaves a row, a queue message or a suppression behind.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { logger } from '../../lambdas/wiring/observability.ts';
import { apiEvent, contentType } from '../helpers/api-events.ts';
import { T0 } from '../helpers/factories.ts';
import { hostileExamples, validNotice } from '../helpers/hostile-examples.ts';
import { harness } from '../helpers/http-harness.ts';

let logs: string[];

beforeEach(() => {
  logs = [];
  for (const level of ['info', 'warn', 'error'] as const) {
    vi.spyOn(logger, level).mockImplementation(((...args: unknown[]) => {
      logs.push(JSON.stringify(args));
    }) as never);
  }
});

afterEach(() => {
  vi.restoreAllMocks();
});

const lossy = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

describe.each([
  ['as a string (text content type)', false],
  ['base64-encoded', true],
] as const)('issue 10 examples, body %s', (_how, base64) => {
  for (const example of hostileExamples(T0)) {
    it(`${example.name} → ${example.status} ${example.errors.map(([p, c]) => `${p || '(body)'}:${c}`).join(' ')}`, async () => {
      // Prepare
      const h = harness();
      const event = apiEvent({
        method: example.method,
        path: example.path,
        headers: { 'content-type': example.contentType },
        body: base64 ? example.body.toString('base64') : lossy.decode(example.body),
        isBase64Encoded: base64,
      });

      // Act
      const reply = await h.call(event);

      // Assess
      expect(reply.status).toBe(example.status);
      expect(contentType(reply.raw)).toBe('application/problem+json');
      expect(reply.json).toMatchObject({ type: example.type, status: example.status });
      const pairs = (reply.json.errors as { path: string; code: string }[]).map((e) => [e.path, e.code]);
      for (const expected of example.errors) expect(pairs).toContainEqual(expected);
      for (const secret of example.secrets) {
        expect(reply.raw.body).not.toContain(secret);
        for (const line of logs) expect(line).not.toContain(secret);
      }
      expect(h.store.intents.size).toBe(0);
      expect(h.store.suppressions.size).toBe(0);
      expect(h.enqueued).toEqual([]);
    });
  }
});

describe('a channel this deployment does not send (`SMS_PROVIDER=none`)', () => {
  const SMS_ONLY_REFUSAL = {
    path: 'channels',
    code: 'channel_not_configured',
    message: 'this deployment does not send sms: its provider is none',
  };

  it('POST /v1/notices asking for it is refused 422 channel_not_configured, naming the channel; nothing is written', async () => {
    // Prepare
    const h = harness({ configuredChannels: ['email'] });

    // Act
    const both = await h.call({ method: 'POST', path: '/v1/notices', body: validNotice(T0) });
    const emailOnly = await h.call({
      method: 'POST',
      path: '/v1/notices',
      body: validNotice(T0, { channels: ['email'] }, 'email-only'),
    });

    // Assess: RFC 9457, the field-level error names the channel; the e-mail notice is taken.
    expect(both.status).toBe(422);
    expect(contentType(both.raw)).toBe('application/problem+json');
    expect(both.json).toMatchObject({ status: 422, errors: [SMS_ONLY_REFUSAL] });
    expect(emailOnly.status).toBe(202);
    expect([...h.store.intents.values()].map((row) => row.channel)).toEqual(['email']);
    expect(h.enqueued.map((ref) => ref.channel)).toEqual(['email']);
  });

  it('a batch item asking for it gets the same 422; the others are recorded', async () => {
    const h = harness({ configuredChannels: ['email'] });
    const reply = await h.call({
      method: 'POST',
      path: '/v1/notices/batch',
      body: {
        notices: [
          validNotice(T0, { channels: ['email'] }, 'b1'),
          validNotice(T0, { channels: ['sms'] }, 'b2'),
          validNotice(T0, {}, 'b3'),
        ],
      },
    });
    expect(reply.status).toBe(200);
    expect(reply.json.results.map((r: { status: number }) => r.status)).toEqual([202, 422, 422]);
    for (const index of [1, 2]) {
      expect(reply.json.results[index].error).toMatchObject({ status: 422, errors: [SMS_ONLY_REFUSAL] });
    }
    expect(h.store.intents.size).toBe(1);
  });
});
