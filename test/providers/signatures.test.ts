/**
 * The two webhook signature schemes against their publishers' own test vectors: Standard
 * Webhooks (the Svix scheme Resend uses; standard-webhooks/libraries/javascript webhook.test.ts)
 * and SendGrid's Signed Event Webhook (sendgrid-nodejs packages/eventwebhook eventwebhook.spec.js).
 */
import { describe, expect, it } from 'vitest';
import { deriveNoticeId } from '../../lambdas/domain/identity.ts';
import { readConfig } from '../../lambdas/edge/config.ts';
import type { InboundFacet } from '../../lambdas/ports/provider.port.ts';
import { PROVIDERS } from '../../lambdas/providers/registry.ts';
import { sign, verify } from '../../lambdas/providers/resend/svix.ts';
import { publicKeyOf, verifySignature } from '../../lambdas/providers/sendgrid/signature.ts';
import { loadFacet } from '../../lambdas/wiring/providers.ts';
import { startSendGridSimulator } from '../../local/email-simulators/sendgrid.ts';
import { must } from './conformance.ts';

describe('Svix / Standard Webhooks', () => {
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const id = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
  const payload = '{"test": 2432232314}';

  it('signs the published vector', () => {
    expect(sign(secret, id, 1614265330, payload)).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    // The prefix is optional on the key.
    expect(sign('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', id, 1614265330, payload)).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  const now = Date.now();
  const ts = Math.floor(now / 1000);
  const headers = (overrides: Record<string, string | undefined> = {}) => {
    const h: Record<string, string | undefined> = {
      'svix-id': id,
      'svix-timestamp': String(ts),
      'svix-signature': sign(secret, id, ts, payload),
      ...overrides,
    };
    return (name: string) => h[name];
  };

  it('verifies a genuine delivery, by svix-* or by the unbranded webhook-* headers', () => {
    expect(verify(secret, headers(), payload, now)).toEqual({ ok: true, id });
    const unbranded: Record<string, string> = {
      'webhook-id': id,
      'webhook-timestamp': String(ts),
      'webhook-signature': sign(secret, id, ts, payload),
    };
    expect(verify(secret, (n) => unbranded[n], payload, now)).toEqual({ ok: true, id });
  });

  it('accepts any matching v1 entry among several, skipping other versions', () => {
    const genuine = sign(secret, id, ts, payload);
    const many = `v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= v2,${genuine.slice(3)} ${genuine} v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=`;
    expect(verify(secret, headers({ 'svix-signature': many }), payload, now).ok).toBe(true);
    // The right signature under another version prefix does not count.
    expect(verify(secret, headers({ 'svix-signature': `v2,${genuine.slice(3)}` }), payload, now).ok).toBe(
      false,
    );
  });

  it('refuses: missing headers (401), a changed body, a bad or partial signature, a timestamp more than 5 min off (403)', () => {
    expect(verify(secret, headers({ 'svix-id': undefined }), payload, now)).toMatchObject({
      ok: false,
      status: 401,
    });
    expect(verify(secret, headers({ 'svix-timestamp': undefined }), payload, now)).toMatchObject({
      ok: false,
      status: 401,
    });
    expect(verify(secret, headers({ 'svix-signature': undefined }), payload, now)).toMatchObject({
      ok: false,
      status: 401,
    });
    expect(verify(secret, headers(), '{"test": 2432232315}', now)).toMatchObject({ ok: false, status: 403 });
    expect(
      verify(secret, headers({ 'svix-signature': 'v1,dawfeoifkpqwoekfpqoekf' }), payload, now),
    ).toMatchObject({ ok: false, status: 403 });
    expect(
      verify(secret, headers({ 'svix-signature': sign(secret, id, ts, payload).slice(0, 8) }), payload, now)
        .ok,
    ).toBe(false);
    expect(verify(secret, headers({ 'svix-signature': 'v1,' }), payload, now).ok).toBe(false);
    expect(verify(secret, headers({ 'svix-timestamp': 'hello' }), payload, now)).toMatchObject({
      ok: false,
      status: 403,
    });
    for (const skew of [-301_000, 301_000]) {
      const t = Math.floor((now + skew) / 1000);
      const h = headers({ 'svix-timestamp': String(t), 'svix-signature': sign(secret, id, t, payload) });
      expect(verify(secret, h, payload, now)).toMatchObject({ ok: false, status: 403 });
    }
    // Signed with another secret.
    expect(verify('whsec_c2ltdWxhdG9yLXNpZ25pbmcta2V5LTAwMDAwMDA=', headers(), payload, now).ok).toBe(false);
  });
});

describe('SendGrid Signed Event Webhook (ECDSA P-256, SHA-256)', () => {
  const PUBLIC_KEY =
    'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEEDr2LjtURuePQzplybdC+u4CwrqDqBaWjcMMsTbhdbcwHBcepxo7yAQGhHPTnlvFYPAZFceEu/1FwCM/QmGUhA==';
  const SIGNATURE =
    'MEUCIQCtIHJeH93Y+qpYeWrySphQgpNGNr/U+UyUlBkU6n7RAwIgJTz2C+8a8xonZGi6BpSzoQsbVRamr2nlxFDWYNH2j/0=';
  const TIMESTAMP = '1588788367';
  const PAYLOAD = JSON.stringify({
    category: 'example_payload',
    event: 'test_event',
    message_id: 'message_id',
  });
  const key = publicKeyOf(PUBLIC_KEY);

  it('verifies the published vector, over timestamp + raw body', () => {
    expect(verifySignature(key, SIGNATURE, TIMESTAMP, PAYLOAD)).toBe(true);
  });

  it('refuses another key, body, signature or timestamp, and malformed input, without throwing', () => {
    const other = publicKeyOf(
      'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEqTxd43gyp8IOEto2LdIfjRQrIbsd4SXZkLW6jDutdhXSJCWHw8REntlo7aNDthvj+y7GjUuFDb/R1NGe1OPzpA==',
    );
    expect(verifySignature(other, SIGNATURE, TIMESTAMP, PAYLOAD)).toBe(false);
    expect(verifySignature(key, SIGNATURE, TIMESTAMP, 'payload')).toBe(false);
    expect(
      verifySignature(
        key,
        'MEUCIQCtIHJeH93Y+qpYeWrySphQgpNGNr/U+UyUlBkU6n7RAwIgJTz2C+8a8xonZGi6BpSzoQsbVRamr2nlxFDWYNH3j/0=',
        TIMESTAMP,
        PAYLOAD,
      ),
    ).toBe(false);
    expect(verifySignature(key, SIGNATURE, 'timestamp', PAYLOAD)).toBe(false);
    expect(verifySignature(key, undefined, TIMESTAMP, PAYLOAD)).toBe(false);
    expect(verifySignature(key, 'not base64 !', TIMESTAMP, PAYLOAD)).toBe(false);
    expect(verifySignature(key, SIGNATURE, undefined, PAYLOAD)).toBe(false);
  });

  it('a key that is not a P-256 public key is a configuration error', () => {
    expect(() => publicKeyOf('bm90IGEga2V5')).toThrow();
  });
});

describe('SendGrid deliveries signed outside the freshness window', () => {
  it('are refused with 403 either way past 10 minutes, with the simulator’s real signatures; within, they are read', async () => {
    // Prepare: the simulator signs at its clock; the module reads at ours.
    const signedAt = Date.parse('2026-03-02T09:30:00Z');
    const sim = await startSendGridSimulator({ clock: () => signedAt });
    try {
      const provider = PROVIDERS.find((p) => p.descriptor.id === 'sendgrid');
      let now = signedAt;
      const env = {
        SENDGRID_WEBHOOK_PUBLIC_KEY: sim.publicKey,
        PUBLIC_BASE_URL: 'https://notices.example.test',
      };
      const inbound = must(
        await loadFacet(must(provider), 'inbound', {
          config: readConfig(env),
          env,
          clock: { now: () => now },
        }),
      );
      const handle = (inbound.facet as Extract<InboundFacet, { kind: 'webhook' }>).create(inbound.context);
      const { body, headers } = sim.signedDelivery([
        {
          email: 'patient@example.com',
          timestamp: Math.floor(signedAt / 1000),
          event: 'delivered',
          sg_event_id: 'ZGVsaXZlcmVkLTA',
          sg_message_id: 'W86EgYT6SQKk0lRflfLRsA.filterdrecv-1-0.0',
          notice_intent: `${deriveNoticeId('lab-result-ready', 'evt_fresh', 'pat_1')}-email`,
        },
      ]);
      const request = {
        url: 'https://notices.example.test/v1/provider-events/sendgrid',
        header: (name: string) => headers[name.toLowerCase()],
        body,
        contentType: 'application/json',
      };
      const at = (offsetMs: number) => {
        now = signedAt + offsetMs;
        return handle(request);
      };

      // Act and assess: within ten minutes, before or after our clock, it is read.
      for (const offsetMs of [-600_000, -1_000, 0, 1_000, 600_000]) {
        expect(at(offsetMs), `${offsetMs} ms`).toMatchObject({
          kind: 'accepted',
          reports: [{ kind: 'delivered' }],
        });
      }
      // Past them, either way, the same genuine delivery is refused and reports nothing.
      for (const offsetMs of [-601_000, 601_000, 3_600_000, 86_400_000]) {
        expect(at(offsetMs), `${offsetMs} ms`).toEqual({
          kind: 'refused',
          status: 403,
          detail: 'X-Twilio-Email-Event-Webhook-Timestamp is more than 10 minutes off',
        });
      }
    } finally {
      await sim.close();
    }
  });
});
