/**
 * Issue 10's examples, in-process: each refused with its documented status and codes whether
 * API Gateway hands the body over as a string (text content types; invalid bytes then arrive as
 * U+FFFD) or base64-encoded, and none leaves a row, a queue message or a suppression behind.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { logger } from '../../lambdas/wiring/observability.ts';
import { apiEvent, contentType } from '../helpers/api-events.ts';
import { T0 } from '../helpers/factories.ts';
import { hostileExamples } from '../helpers/hostile-examples.ts';
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
