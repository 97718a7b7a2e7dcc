/**
 * Cold starts with provider secrets as a new deployment leaves them (issue 21): every credential
 * field empty, exactly what the CDK writes into a new provider secret
 * (lib/providers/provider-secret.ts `placeholderSecret`), read through the real Secrets Manager
 * adapter from a stand-in. Every function starts — http, both senders, the reconciler, provider
 * events —, the placeholder provider's facets are left out and named, and its channel's rows
 * fail as provider_not_configured while the other channel's provider is loaded as usual.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { ensureKeyTable } from '../../lambdas/adapters/dynamodb/key-table.ts';
import { ensureLedgerTable } from '../../lambdas/adapters/dynamodb/ledger-table.ts';
import { keyTableNameOf } from '../../lambdas/contract/key-table.ts';
import { Metric } from '../../lambdas/contract/metrics.ts';
import { PROVIDERS } from '../../lambdas/providers/registry.ts';
import { deliverIntent } from '../../lambdas/use-cases/deliver.ts';
import { submitNotice } from '../../lambdas/use-cases/submit-notice.ts';
import { buildHttpRuntime } from '../../lambdas/wiring/http.ts';
import { logger, metrics } from '../../lambdas/wiring/observability.ts';
import {
  buildProviderEventsRuntime,
  getProviderEventsRuntime,
} from '../../lambdas/wiring/provider-events.ts';
import { buildReconcilerRuntime } from '../../lambdas/wiring/reconciler.ts';
import { buildSenderRuntime } from '../../lambdas/wiring/sender.ts';
import { placeholderSecret } from '../../lib/providers/provider-secret.ts';
import { ddbClient, uniqueTableName } from '../helpers/dynamodb.ts';
import { EXAMPLE_REQUEST } from '../helpers/fakes.ts';
import { type SecretsManagerStandIn, startSecretsManager } from '../helpers/secrets-manager.ts';

let secrets: SecretsManagerStandIn;
let base: Record<string, string>;
/** `<ID>_SECRET_ARN` of each provider with a secret, holding its placeholders. */
const secretArns: Record<string, string> = {};
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  secrets = await startSecretsManager();
  const tableName = uniqueTableName('placeholders');
  await ensureLedgerTable(ddbClient(), tableName);
  // Intake reads the key records of a notice before it reserves (docs/archive.md "Key records").
  await ensureKeyTable(ddbClient(), keyTableNameOf(tableName));
  for (const { descriptor } of PROVIDERS) {
    if (!descriptor.secretVariable) continue;
    const arn = secrets.put(`notice-ledger/${descriptor.id}`, JSON.stringify(placeholderSecret(descriptor)));
    secretArns[descriptor.secretVariable] = arn;
  }
  base = {
    LEDGER_TABLE_NAME: tableName,
    FINGERPRINT_KEY_SECRET_ARN: secrets.put(
      'notice-ledger/fingerprint-key',
      JSON.stringify({ key: randomBytes(32).toString('base64') }),
    ),
    ENVELOPE_LOCAL_KEY: randomBytes(32).toString('base64'),
    PUBLIC_BASE_URL: 'https://notices.example.test',
    // Read only when a timeline is past the hot window (no S3 request at start).
    ARCHIVE_BUCKET: 'notice-ledger-archive-wiring-test',
  };
  // The SDK clients the wiring builds read these from process.env.
  for (const [name, value] of Object.entries({
    AWS_ENDPOINT_URL_DYNAMODB: inject('ddbEndpoint'),
    AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  })) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
});

afterAll(async () => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  await secrets?.close();
});

/** What the delivery stack sets for a deployment: the providers, their secrets, their plain settings. */
function deployment(extra: Record<string, string>): Record<string, string> {
  return { ...base, ...extra };
}

describe('cold starts with placeholder provider secrets', () => {
  it('an e-mail-only deployment until the Twilio secret is filled: every function starts; SMS sends fail as provider_not_configured', async () => {
    // Prepare: SES for e-mail (no secret), Twilio for SMS with its new, empty secret.
    const env = deployment({
      SES_FROM_ADDRESS: 'notices@example.com',
      TWILIO_SECRET_ARN: secretArns.TWILIO_SECRET_ARN as string,
    });

    // Act: the five cold starts.
    const http = await buildHttpRuntime(env);
    const sendEmail = await buildSenderRuntime('email', env);
    const sendSms = await buildSenderRuntime('sms', env);
    const reconciler = await buildReconcilerRuntime(env);
    const events = await buildProviderEventsRuntime(env);

    // Assess: intake takes both channels; e-mail is wired as always; Twilio's facets are left out.
    const twilioEmpty =
      'fields accountSid, authToken, from of the secret TWILIO_SECRET_ARN names are still empty';
    expect(http.deps.configuredChannels).toEqual(['email', 'sms']);
    expect(sendEmail.deps.transports.email?.provider).toBe('ses');
    expect(sendEmail.skipped).toEqual([]);
    expect(sendSms.deps.transports).toEqual({});
    expect(sendSms.skipped).toEqual([
      {
        provider: 'twilio',
        facet: 'transport',
        detail: `the twilio transport has no credentials yet: ${twilioEmpty}`,
      },
    ]);
    expect(sendSms.deps.unconfiguredProviders).toEqual({
      sms: { provider: 'twilio', detail: `the twilio transport has no credentials yet: ${twilioEmpty}` },
    });
    expect(reconciler.skipped.map((s) => `${s.provider}.${s.facet}`)).toEqual([
      'twilio.lookup',
      'twilio.status',
    ]);
    expect(reconciler.deps.lookups).toEqual({});
    expect(events.skipped).toEqual([
      {
        provider: 'twilio',
        facet: 'inbound',
        detail:
          'the twilio inbound has no credentials yet: field authToken of the secret TWILIO_SECRET_ARN names is still empty',
      },
    ]);
    expect([...events.webhooks.keys()]).toEqual([]);
    expect([...events.eventReaders.keys()]).toEqual(['aws.ses']);

    // And a notice's SMS fails at once, escalated, with nothing sent; its e-mail is left to SES.
    const submitted = await submitNotice(
      { ...EXAMPLE_REQUEST, eventId: `evt_placeholder_${randomBytes(4).toString('hex')}` },
      { ...http.deps, queue: { enqueue: async () => undefined } },
    );
    if (submitted.kind !== 'recorded') throw new Error(submitted.kind);
    const sms = await deliverIntent({ noticeId: submitted.noticeId, channel: 'sms' }, sendSms.deps);
    expect(sms).toMatchObject({
      kind: 'recorded',
      state: 'failed',
      reason: 'provider_not_configured',
      escalation: 'published',
    });
  });

  it('every provider with a secret, selected or retained, still empty: every function starts, nothing of theirs is loaded', async () => {
    const env = deployment({
      EMAIL_PROVIDER: 'resend',
      SMS_PROVIDER: 'infrai',
      RETAINED_PROVIDERS: 'sendgrid,twilio',
      RESEND_FROM: 'Clinic <notices@example.com>',
      ...secretArns,
    });

    const http = await buildHttpRuntime(env);
    const sendEmail = await buildSenderRuntime('email', env);
    const sendSms = await buildSenderRuntime('sms', env);
    const reconciler = await buildReconcilerRuntime(env);
    const events = await buildProviderEventsRuntime(env);

    expect(http.deps.configuredChannels).toEqual(['email', 'sms']);
    expect(sendEmail.deps.unconfiguredProviders?.email?.provider).toBe('resend');
    expect(sendSms.deps.unconfiguredProviders?.sms?.provider).toBe('infrai');
    expect([sendEmail.deps.transports, sendSms.deps.transports]).toEqual([{}, {}]);
    expect(reconciler.skipped.map((s) => `${s.provider}.${s.facet}`).sort()).toEqual([
      'infrai.lookup',
      'infrai.status',
      'resend.lookup',
      'sendgrid.lookup',
      'twilio.lookup',
      'twilio.status',
    ]);
    expect(Object.keys(reconciler.deps.lookups)).toEqual([]);
    expect(events.skipped.map((s) => `${s.provider}.${s.facet}`).sort()).toEqual([
      'resend.inbound',
      'sendgrid.inbound',
      'twilio.inbound',
    ]);
    // Each secret was read, not assumed.
    for (const arn of Object.values(secretArns)) expect(secrets.reads).toContain(arn);
  });

  it('a missing plain setting is still a configuration error: only placeholders in a secret are let through', async () => {
    const env = deployment({
      EMAIL_PROVIDER: 'resend',
      RESEND_SECRET_ARN: secretArns.RESEND_SECRET_ARN as string,
    });
    await expect(buildSenderRuntime('email', env)).rejects.toThrow(
      'RESEND_API_KEY, RESEND_FROM are required by the resend transport',
    );
  });

  it('the cold start tells each skipped facet once, as a warning and in ProvidersNotConfigured', async () => {
    const warnings: unknown[] = [];
    vi.spyOn(logger, 'warn').mockImplementation(((message: string, attributes: unknown) => {
      warnings.push({ message, attributes });
    }) as never);
    const counted = vi.spyOn(metrics, 'addMetric');
    try {
      Object.assign(process.env, base, { TWILIO_SECRET_ARN: secretArns.TWILIO_SECRET_ARN });
      await getProviderEventsRuntime();
      await getProviderEventsRuntime();
      expect(warnings).toEqual([
        {
          message: 'provider not configured: facet skipped',
          attributes: expect.objectContaining({
            function: 'providerEvents',
            provider: 'twilio',
            facet: 'inbound',
          }),
        },
      ]);
      expect(counted).toHaveBeenCalledTimes(1);
      expect(counted).toHaveBeenCalledWith(Metric.providersNotConfigured, 'Count', 1);
    } finally {
      for (const name of [...Object.keys(base), 'TWILIO_SECRET_ARN']) delete process.env[name];
      vi.restoreAllMocks();
      metrics.clearMetrics();
    }
  });
});
