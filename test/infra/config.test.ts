import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../lambdas/contract/config-error.ts';
import {
  deployKeyOf,
  OPERATOR_SETTING_NAMES,
  OPERATOR_SETTINGS,
  WIRING_SETTINGS,
} from '../../lambdas/contract/settings.ts';
import { readConfig as readRuntimeConfig } from '../../lambdas/edge/config.ts';
import { createNoticeLedgerApp, deploymentEnvironment } from '../../lib/app.ts';
import {
  DEPLOYMENT_ONLY_DEFAULTS,
  loadSettings,
  readConfig,
  SETTING_DEFAULTS,
  SETTINGS_FILE,
} from '../../lib/config.ts';
import { PROVIDER_BINDINGS } from '../../lib/providers/registry.ts';
import { ROOT } from './synth.ts';

const fromSettings = (settings: Record<string, unknown>) => readConfig(settings);

describe('deployment settings (deploy/settings.json)', () => {
  it('has documented defaults that synthesize a working deployment', () => {
    const config = fromSettings({});
    expect(config.resourcePrefix).toBe('notice-ledger');
    expect(config.target).toBeUndefined();
    expect(config.providers).toEqual({ email: 'ses', sms: 'twilio', retained: [], fallbacks: {} });
    expect(config.settings).toMatchObject({
      sesFromAddress: 'notices@example.com',
      sesIdentity: '',
      sesAdditionalIdentities: [],
      sesConfigurationSet: '',
      sesRequireTls: true,
      twilioSecretArn: '',
    });
    expect(config.senderTimeoutSeconds).toBe(30);
    expect(config.channels.email).toEqual({ maxConcurrency: 5, batchSize: 10, sendRatePerSecond: undefined });
    expect(config.runtimeEnvironment.HOT_RETENTION).toBe('P35D');
    expect(config.runtimeEnvironment.ARCHIVE_RETENTION_YEARS).toBe('6');
  });

  it('agrees with the runtime’s own defaults (one contract), so AWS and the local stack behave alike', () => {
    const runtime = readRuntimeConfig({});
    expect(fromSettings({}).runtimeEnvironment).toEqual({
      PROVIDER_TIMEOUT_MS: String(runtime.PROVIDER_TIMEOUT_MS),
      SEND_LEASE_MS: String(runtime.SEND_LEASE_MS),
      RECONCILE_INTERVAL_MS: String(runtime.RECONCILE_INTERVAL_MS),
      UNKNOWN_GRACE_MS: String(runtime.UNKNOWN_GRACE_MS),
      UNKNOWN_POLICY: runtime.UNKNOWN_POLICY,
      RETRY_BASE_MS: String(runtime.RETRY_BASE_MS),
      RETRY_CAP_MS: String(runtime.RETRY_CAP_MS),
      MAX_ATTEMPTS: String(runtime.MAX_ATTEMPTS),
      NOTICE_DEFAULT_DEADLINE_MS: String(runtime.NOTICE_DEFAULT_DEADLINE_MS),
      OPEN_INDEX_SHARDS: String(runtime.OPEN_INDEX_SHARDS),
      DELIVERY_REPORT_GRACE_MS: String(runtime.DELIVERY_REPORT_GRACE_MS),
      DELIVERY_REPORT_DEADLINE_MS: String(runtime.DELIVERY_REPORT_DEADLINE_MS),
      STATUS_PULLS_PER_RUN: String(runtime.STATUS_PULLS_PER_RUN),
      OPERATOR_HOLD_MS: String(runtime.OPERATOR_HOLD_MS),
      EMAIL_BATCH_MAX: String(runtime.EMAIL_BATCH_MAX),
      EMAIL_SEND_RATE_PER_SECOND: String(runtime.EMAIL_SEND_RATE_PER_SECOND),
      SMS_SEND_RATE_PER_SECOND: String(runtime.SMS_SEND_RATE_PER_SECOND),
      RATE_BUDGET_LEAD_MS: String(runtime.RATE_BUDGET_LEAD_MS),
      RATE_BUDGET_MAX_WAIT_MS: String(runtime.RATE_BUDGET_MAX_WAIT_MS),
      OUTCOME_WEBHOOK_TIMEOUT_MS: String(runtime.OUTCOME_WEBHOOK_TIMEOUT_MS),
      ARCHIVE_RETENTION_YEARS: String(runtime.ARCHIVE_RETENTION_YEARS),
      // A duration is deployed as written and read as milliseconds.
      HOT_RETENTION: OPERATOR_SETTINGS.HOT_RETENTION.default,
      // A deployment's watches fire after minutes (longer than the intake's timeout), local ones
      // after seconds.
      INDEX_WATCH_DELAY_MS: String(OPERATOR_SETTINGS.INDEX_WATCH_DELAY_MS.deployDefault),
      // A deployment's key-table buckets are sized for its volume; local ones are few, so that
      // tests pack many records a bucket.
      KEY_BUCKET_CHARS: String(OPERATOR_SETTINGS.KEY_BUCKET_CHARS.deployDefault),
    });
    expect(runtime.HOT_RETENTION).toBe(35 * 86_400_000);
    expect(runtime.INDEX_WATCH_DELAY_MS).toBe(5_000);
    expect(runtime.PROVIDER_TIMEOUT_MS).toBe(SETTING_DEFAULTS.providerTimeoutMs);
    expect(runtime.SEND_LEASE_MS).toBe(SETTING_DEFAULTS.sendLeaseMs);
    expect(runtime.RECONCILE_INTERVAL_MS).toBe(SETTING_DEFAULTS.reconcileIntervalMs);
    expect(runtime.UNKNOWN_GRACE_MS).toBe(SETTING_DEFAULTS.unknownGraceMs);
    expect(runtime.UNKNOWN_POLICY).toBe(SETTING_DEFAULTS.unknownPolicy);
    expect(runtime.RETRY_BASE_MS).toBe(SETTING_DEFAULTS.retryBaseMs);
    expect(runtime.RETRY_CAP_MS).toBe(SETTING_DEFAULTS.retryCapMs);
    expect(runtime.MAX_ATTEMPTS).toBe(SETTING_DEFAULTS.maxAttempts);
    expect(runtime.NOTICE_DEFAULT_DEADLINE_MS).toBe(SETTING_DEFAULTS.noticeDefaultDeadlineMs);
    expect(runtime.OPEN_INDEX_SHARDS).toBe(SETTING_DEFAULTS.openIndexShards);
    expect(runtime.SCHEDULE_GROUP_NAME).toBe(`${fromSettings({}).resourcePrefix}-retries`);
  });

  it('names every key that sets a variable after it: camelCase of the name, same unit, same default', () => {
    expect(deployKeyOf('EMAIL_BATCH_MAX')).toBe('emailBatchMax');
    expect(deployKeyOf('RECONCILE_INTERVAL_MS')).toBe('reconcileIntervalMs');
    expect(deployKeyOf('SES_FROM_ADDRESS')).toBe('sesFromAddress');
    const runtime = readRuntimeConfig({});
    for (const name of OPERATOR_SETTING_NAMES) {
      const key = deployKeyOf(name);
      expect(key in SETTING_DEFAULTS, key).toBe(true);
      const setting = OPERATOR_SETTINGS[name] as { kind: string; deployDefault?: number };
      if ((setting.kind === 'integer' || setting.kind === 'number') && setting.deployDefault === undefined)
        expect(SETTING_DEFAULTS[key], key).toBe(runtime[name]);
    }
    // Every provider key that sets a variable is derived from it, and defaults to the descriptor's.
    for (const binding of PROVIDER_BINDINGS) {
      for (const [name, setting] of Object.entries(binding.settings.variables)) {
        const key = deployKeyOf(name);
        expect(key in binding.settings.defaults, key).toBe(true);
        const declared = binding.descriptor.settings.find((s) => s.name === name)?.default;
        if (setting?.default === undefined) expect(binding.settings.defaults[key], key).toBe(declared ?? '');
      }
    }
  });

  it('offers no wiring as a deployment key, and refuses the keys the old vocabulary had', () => {
    for (const name of Object.keys(WIRING_SETTINGS))
      expect(deployKeyOf(name) in SETTING_DEFAULTS, name).toBe(false);
    for (const key of ['ledgerTableName', 'emailQueueUrl', 'scheduleGroupName', 'escalationEventBus']) {
      expect(() => fromSettings({ [key]: 'x' })).toThrow(`${key}: not a setting`);
    }
    for (const key of [
      'reconcileIntervalMinutes',
      'sesConfigurationSetName',
      'eumConfigurationSetName',
      'eumOptOutListName',
    ]) {
      // Refused, naming what replaced it (lambdas/contract/settings.ts RETIRED_NAMES).
      expect(() => fromSettings({ [key]: 1 })).toThrow(new RegExp(`${key} was renamed: use \\w+`));
    }
    // Deployment-only keys set no variable: none of them is a variable's camelCase.
    const variables = new Set<string>([
      ...OPERATOR_SETTING_NAMES.map(deployKeyOf),
      ...Object.keys(WIRING_SETTINGS).map(deployKeyOf),
    ]);
    for (const key of Object.keys(DEPLOYMENT_ONLY_DEFAULTS)) expect(variables.has(key), key).toBe(false);
  });

  it('ships a valid settings file, and keeps cdk.json to the app command, CLI switches and feature flags', () => {
    expect(() => readConfig(loadSettings(join(ROOT, SETTINGS_FILE)))).not.toThrow();
    const cdkJson = JSON.parse(readFileSync(join(ROOT, 'cdk.json'), 'utf8'));
    expect(cdkJson.app).toBe('npx tsx bin/app.ts');
    expect(cdkJson.notices).toBe(false);
    expect(cdkJson.context['cli-telemetry']).toBe(false);
    for (const key of Object.keys(cdkJson.context)) {
      expect(key in SETTING_DEFAULTS, `cdk.json context key ${key}`).toBe(false);
    }
  });

  it('reads JSON values as they are written', () => {
    const config = fromSettings({
      emailMaxConcurrency: 10,
      sesRequireTls: false,
      sesAdditionalIdentities: ['ada@example.org', 'bob@example.org'],
      reservedConcurrency: { reconciler: 1 },
      smsSendRatePerSecond: 1,
      hotRetention: 'P7DT12H',
      account: '111122223333',
      region: 'ap-southeast-2',
      '//': 'a comment for the next reader',
    });
    expect(config.channels.email.maxConcurrency).toBe(10);
    expect(config.settings.sesRequireTls).toBe(false);
    expect(config.settings.sesAdditionalIdentities).toEqual(['ada@example.org', 'bob@example.org']);
    expect(config.reservedConcurrency).toEqual({ reconciler: 1 });
    expect(config.channels.sms.sendRatePerSecond).toBe(1);
    expect(config.runtimeEnvironment.HOT_RETENTION).toBe('P7DT12H');
    expect(config.target).toEqual({ account: '111122223333', region: 'ap-southeast-2' });
  });

  it.each([
    [{ emailMaxConcurrency: 1 }, /emailMaxConcurrency/],
    [{ emailMaxConcurrency: '10' }, /emailMaxConcurrency: .*number/],
    [{ sesRequireTls: 'false' }, /sesRequireTls/],
    [{ providerTimeoutMs: 30_000 }, /sendLeaseMs .* must exceed the sender timeout/],
    [{ reconcileIntervalMs: 90_000 }, /reconcileIntervalMs: .*multiple of 60000/],
    [{ rateBudgetMaxWaitMs: 20_000 }, /rateBudgetMaxWaitMs \(20000\) must leave the provider call room/],
    [{ rateBudgetMaxWaitMs: 250 }, /rateBudgetMaxWaitMs/],
    [{ smsSendRatePerSecond: -1 }, /smsSendRatePerSecond/],
    [{ publicBaseUrl: 'http://notices.example.org' }, /publicBaseUrl: an https URL/],
    [{ twilioSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:twilio' }, /twilioSecretArn/],
    [{ logRetentionDays: 8 }, /logRetentionDays/],
    // The archive is at most 15 minutes behind: a day of hot window always has the row archived.
    [{ hotRetention: 'PT20S' }, /hotRetention: an ISO 8601 duration .* at least P1D/],
    [{ hotRetention: 'P1M' }, /hotRetention: an ISO 8601 duration/],
    [{ ledgerRetentionDays: 400 }, /ledgerRetentionDays was renamed: use hotRetention/],
    [{ archiveRetentionYears: 5 }, /archiveRetentionYears/],
    [{ sesFromAddress: 'not-an-address' }, /sesFromAddress: an e-mail address/],
    [{ alarmEmail: 'oncall' }, /alarmEmail/],
    [{ reservedConcurrency: { sendSms: 1 } }, /below smsMaxConcurrency/],
    [{ reservedConcurrency: { nobody: 1 } }, /reservedConcurrency/],
    [{ sesFromAdress: 'typo@example.org' }, /sesFromAdress: not a setting/],
    [{ account: '123' }, /account: a 12-digit account id/],
    [{ region: 'Ireland' }, /region: a Region code/],
    [{ account: '111122223333' }, /account and region are set together/],
    [
      { emailProvider: 'mailgun' },
      /emailProvider: no provider "mailgun" \(ses, twilio, resend, sendgrid, eum, infrai\)/,
    ],
    [{ smsProvider: 'ses' }, /smsProvider: provider "ses" does not send sms/],
    [{ retainedProviders: ['nobody'] }, /retainedProviders: no provider "nobody"/],
    [
      { operatorPrincipals: ['ops-team'] },
      /not an IAM role, user or account ARN.*operatorPrincipals: ops-team/,
    ],
    [{ auditorPrincipals: 'arn:aws:iam::111122223333:role/audit' }, /auditorPrincipals/],
    [
      { auditorPrincipals: ['arn:aws:iam::111122223333:role/audit', 'arn:aws:iam::111122223333:group/x'] },
      /auditorPrincipals: arn:aws:iam::111122223333:group\/x/,
    ],
    [
      { sendLeaseMs: 40_000, providerTimeoutMs: 1_000, retryBaseMs: 5_000, retryCapMs: 1_000 },
      /retryCapMs \(1000\) must be at least retryBaseMs/,
    ],
  ])('rejects %j, naming the setting and the file', (settings, message) => {
    expect(() => fromSettings(settings)).toThrow(ConfigError);
    expect(() => fromSettings(settings)).toThrow(message);
    if (!/must exceed|below/.test(String(message)))
      expect(() => fromSettings(settings)).toThrow(SETTINGS_FILE);
  });

  it('refuses a missing or malformed settings file instead of falling back to the defaults', () => {
    const dir = mkdtempSync(join(tmpdir(), 'settings-'));
    expect(() => loadSettings(join(dir, 'absent.json'))).toThrow(/deploy\/settings.json cannot be read/);
    writeFileSync(join(dir, 'broken.json'), '{ "alarmEmail": "oncall@example.org", }');
    expect(() => loadSettings(join(dir, 'broken.json'))).toThrow(/deploy\/settings.json is not valid JSON/);
    writeFileSync(join(dir, 'list.json'), '[]');
    expect(() => loadSettings(join(dir, 'list.json'))).toThrow(/one JSON object/);
  });

  it('refuses settings passed as CDK context, which a later plain `cdk deploy` would silently drop', () => {
    expect(() =>
      createNoticeLedgerApp({
        settings: {},
        compliance: false,
        appProps: { context: { sesFromAddress: 'notices@example.org', 'aws:cdk:bundling-stacks': [] } },
      }),
    ).toThrow(/sesFromAddress was given as CDK context .* deploy\/settings.json only/);
  });
});

describe('deployment environment (bin/app.ts)', () => {
  const defaults = fromSettings({});
  it('uses the account and Region the CLI passes, when it passes both', () => {
    expect(
      deploymentEnvironment(defaults, {
        CDK_DEFAULT_ACCOUNT: '123456789012',
        CDK_DEFAULT_REGION: 'eu-west-1',
      }),
    ).toEqual({ account: '123456789012', region: 'eu-west-1' });
  });

  it('stays environment-agnostic without credentials, rather than taking the CLI’s fallback Region', () => {
    // Without credentials the CLI sets CDK_DEFAULT_REGION (us-east-1 at worst) but no account.
    expect(deploymentEnvironment(defaults, { CDK_DEFAULT_REGION: 'us-east-1' })).toBeUndefined();
    expect(deploymentEnvironment(defaults, {})).toBeUndefined();
  });

  it('prefers the account and Region pinned in the settings over the CLI’s', () => {
    const pinned = fromSettings({ account: '111122223333', region: 'ap-southeast-2' });
    expect(
      deploymentEnvironment(pinned, { CDK_DEFAULT_ACCOUNT: '123456789012', CDK_DEFAULT_REGION: 'us-east-1' }),
    ).toEqual({ account: '111122223333', region: 'ap-southeast-2' });
  });
});
