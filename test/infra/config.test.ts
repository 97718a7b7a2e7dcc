import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readConfig as readRuntimeConfig } from '../../lambdas/edge/config.ts';
import { CONTEXT_DEFAULTS, ConfigurationError, readConfig } from '../../lib/config.ts';
import { ROOT } from './synth.ts';

const fromContext = (context: Record<string, unknown>) => readConfig((key) => context[key]);

describe('deployment configuration (CDK context)', () => {
  it('has documented defaults that synthesize a working deployment', () => {
    const config = fromContext({});
    expect(config.resourcePrefix).toBe('notice-ledger');
    expect(config.ses).toEqual({
      fromAddress: 'notices@example.com',
      identity: 'example.com',
      additionalIdentities: [],
      configurationSetName: 'notice-ledger',
      requireTls: true,
    });
    expect(config.senderTimeoutSeconds).toBe(30);
    expect(config.channels.email).toEqual({ maxConcurrency: 5, batchSize: 10, sendRatePerSecond: undefined });
    expect(config.twilioSecretArn).toBeUndefined();
    expect(config.ledgerRetentionDays).toBe(400);
  });

  it('agrees with the runtime’s own defaults (DESIGN §6), so AWS and the local stack behave alike', () => {
    const runtime = readRuntimeConfig({});
    expect(runtime.PROVIDER_TIMEOUT_MS).toBe(CONTEXT_DEFAULTS.providerTimeoutMs);
    expect(runtime.SEND_LEASE_MS).toBe(CONTEXT_DEFAULTS.sendLeaseMs);
    expect(runtime.RECONCILE_INTERVAL_MS).toBe(CONTEXT_DEFAULTS.reconcileIntervalMinutes * 60_000);
    expect(runtime.UNKNOWN_GRACE_MS).toBe(CONTEXT_DEFAULTS.unknownGraceMs);
    expect(runtime.UNKNOWN_POLICY).toBe(CONTEXT_DEFAULTS.unknownPolicy);
    expect(runtime.RETRY_BASE_MS).toBe(CONTEXT_DEFAULTS.retryBaseMs);
    expect(runtime.RETRY_CAP_MS).toBe(CONTEXT_DEFAULTS.retryCapMs);
    expect(runtime.MAX_ATTEMPTS).toBe(CONTEXT_DEFAULTS.maxAttempts);
    expect(runtime.NOTICE_DEFAULT_DEADLINE_MS).toBe(CONTEXT_DEFAULTS.noticeDefaultDeadlineMs);
    expect(runtime.OPEN_INDEX_SHARDS).toBe(CONTEXT_DEFAULTS.openIndexShards);
    expect(runtime.SCHEDULE_GROUP_NAME).toBe(`${fromContext({}).resourcePrefix}-retries`);
  });

  it('is what cdk.json declares, with telemetry and notices off and the tsx app command', () => {
    const cdkJson = JSON.parse(readFileSync(join(ROOT, 'cdk.json'), 'utf8'));
    expect(cdkJson.app).toBe('npx tsx bin/app.ts');
    expect(cdkJson.notices).toBe(false);
    expect(cdkJson.context['cli-telemetry']).toBe(false);
    for (const [key, value] of Object.entries(CONTEXT_DEFAULTS)) {
      expect(cdkJson.context[key], key).toEqual(value);
    }
  });

  it('coerces `-c key=value` strings', () => {
    const config = fromContext({
      emailMaxConcurrency: '10',
      sesRequireTls: 'false',
      sesAdditionalIdentities: 'ada@example.org, bob@example.org',
      reservedConcurrency: '{"reconciler":1}',
      smsSendRatePerSecond: '1',
      ledgerRetentionDays: '0',
    });
    expect(config.channels.email.maxConcurrency).toBe(10);
    expect(config.ses.requireTls).toBe(false);
    expect(config.ses.additionalIdentities).toEqual(['ada@example.org', 'bob@example.org']);
    expect(config.reservedConcurrency).toEqual({ reconciler: 1 });
    expect(config.channels.sms.sendRatePerSecond).toBe(1);
    expect(config.ledgerRetentionDays).toBeUndefined();
  });

  it.each([
    [{ emailMaxConcurrency: 1 }, /emailMaxConcurrency/],
    [{ providerTimeoutMs: 30_000 }, /sendLeaseMs .* must exceed the sender timeout/],
    [{ twilioSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:twilio' }, /twilioSecretArn/],
    [{ logRetentionDays: 8 }, /logRetentionDays/],
    [{ sesFromAddress: 'not-an-address' }, /sesFromAddress/],
    [{ reservedConcurrency: { sendSms: 1 } }, /below smsMaxConcurrency/],
    [{ reservedConcurrency: { nobody: 1 } }, /reservedConcurrency/],
  ])('rejects %j', (context, message) => {
    expect(() => fromContext(context)).toThrow(ConfigurationError);
    expect(() => fromContext(context)).toThrow(message);
  });
});
