/**
 * Per-function composition (lambdas/wiring/): each function starts from its own configuration,
 * refuses a start it cannot honour with a message naming the variable, and checks its keys
 * against the ledger table at cold start.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ensureLedgerTable } from '../../lambdas/adapters/dynamodb/ledger-table.ts';
import { BudgetSendGate } from '../../lambdas/use-cases/budget-send-gate.ts';
import { SharedSendGate } from '../../lambdas/use-cases/shared-send-gate.ts';
import { buildHttpRuntime } from '../../lambdas/wiring/http.ts';
import { buildProviderEventsRuntime } from '../../lambdas/wiring/provider-events.ts';
import { buildReconcilerRuntime } from '../../lambdas/wiring/reconciler.ts';
import { buildSenderRuntime } from '../../lambdas/wiring/sender.ts';
import { ddbClient, uniqueTableName } from '../helpers/dynamodb.ts';

const key = () => randomBytes(32).toString('base64');
const TWILIO = { TWILIO_ACCOUNT_SID: 'AC1', TWILIO_AUTH_TOKEN: 'token', TWILIO_FROM: '+15005550006' };

let base: Record<string, string>;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  const tableName = uniqueTableName('wiring');
  await ensureLedgerTable(ddbClient(), tableName);
  base = {
    LEDGER_TABLE_NAME: tableName,
    FINGERPRINT_KEY: key(),
    ENVELOPE_LOCAL_KEY: key(),
    PUBLIC_BASE_URL: 'https://notices.example.test',
    // Read only when a timeline is past the hot window (no S3 request at start).
    ARCHIVE_BUCKET: 'notice-ledger-archive-wiring-test',
  };
  // The SDK clients the wiring builds read these from process.env.
  for (const [name, value] of Object.entries({
    AWS_ENDPOINT_URL_DYNAMODB: inject('ddbEndpoint'),
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
  })) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
});

afterAll(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('provider selection', () => {
  it('an unknown EMAIL_PROVIDER stops the start naming the variable and the registered ids', async () => {
    await expect(buildSenderRuntime('email', { ...base, EMAIL_PROVIDER: 'mailgun' })).rejects.toThrow(
      'EMAIL_PROVIDER: no provider "mailgun" (registered: ses, twilio, resend, sendgrid, eum, infrai)',
    );
  });

  it('a provider for the wrong channel is refused', async () => {
    await expect(buildSenderRuntime('sms', { ...base, SMS_PROVIDER: 'ses' })).rejects.toThrow(
      'SMS_PROVIDER: provider "ses" does not send sms',
    );
  });

  it('a missing credential stops the sender, naming each variable and the secret field in AWS', async () => {
    await expect(buildSenderRuntime('sms', { ...base, TWILIO_ACCOUNT_SID: 'AC1' })).rejects.toThrow(
      'TWILIO_AUTH_TOKEN, TWILIO_FROM are required by the twilio transport (in AWS: fields authToken, from of the secret TWILIO_SECRET_ARN names)',
    );
  });

  it('an unknown RETAINED_PROVIDERS entry stops the reconciler and the provider-events function', async () => {
    const env = { ...base, ...TWILIO, RETAINED_PROVIDERS: 'ses,oldmail' };
    await expect(buildReconcilerRuntime(env)).rejects.toThrow('RETAINED_PROVIDERS: no provider "oldmail"');
    await expect(buildProviderEventsRuntime(env)).rejects.toThrow(
      'RETAINED_PROVIDERS: no provider "oldmail"',
    );
  });

  it('each function carries only what it uses: the sender one transport, the reconciler lookups by provider', async () => {
    const sender = await buildSenderRuntime('email', base);
    const reconciler = await buildReconcilerRuntime({ ...base, ...TWILIO });
    const events = await buildProviderEventsRuntime({ ...base, ...TWILIO });

    expect(sender.provider).toBe('ses');
    expect(Object.keys(sender.deps.transports)).toEqual(['email']);
    expect(sender.deps.transports.email?.provider).toBe('ses');
    // SES has no lookup: only Twilio answers the reconciler's questions.
    expect(Object.keys(reconciler.deps.lookups)).toEqual(['twilio']);
    expect(reconciler.deps.channelProviders).toEqual({ email: 'ses', sms: 'twilio' });
    expect([...events.webhooks.keys()]).toEqual(['twilio']);
    expect([...events.eventReaders.keys()]).toEqual(['aws.ses']);
  });
});

describe('provider failover (SMS_FALLBACK_PROVIDER)', () => {
  it('the sms sender carries both transports; the reconciler and provider events answer for both', async () => {
    const env = {
      ...base,
      ...TWILIO,
      SMS_FALLBACK_PROVIDER: 'eum',
      EUM_ORIGINATION_IDENTITY: 'phone-0123456789abcdef',
    };
    const sender = await buildSenderRuntime('sms', env);
    expect(sender.deps.transports.sms?.provider).toBe('twilio');
    expect(sender.deps.fallbackTransports?.sms?.provider).toBe('eum');
    const reconciler = await buildReconcilerRuntime(env);
    expect(Object.keys(reconciler.deps.lookups)).toEqual(['twilio']);
    const events = await buildProviderEventsRuntime(env);
    expect([...events.webhooks.keys()]).toEqual(['twilio']);
    expect([...events.eventReaders.keys()].sort()).toEqual(['aws.ses', 'aws.sms-voice']);
  });

  it.each([
    [
      { SMS_FALLBACK_PROVIDER: 'twilio' },
      'SMS_FALLBACK_PROVIDER: provider "twilio" is already the sms provider',
    ],
    [{ SMS_FALLBACK_PROVIDER: 'ses' }, 'SMS_FALLBACK_PROVIDER: provider "ses" does not send sms'],
    [{ SMS_FALLBACK_PROVIDER: 'nope' }, 'SMS_FALLBACK_PROVIDER: no provider "nope"'],
    [{ SMS_PROVIDER: 'none', SMS_FALLBACK_PROVIDER: 'eum' }, 'SMS_FALLBACK_PROVIDER: SMS_PROVIDER is none'],
  ])('a fallback that cannot be one stops the start: %o', async (extra, message) => {
    await expect(buildReconcilerRuntime({ ...base, ...TWILIO, ...extra })).rejects.toThrow(message);
  });
});

describe('a channel left unconfigured (SMS_PROVIDER=none)', () => {
  it('intake sends e-mail only; the reconciler and provider events start without any SMS credential; no SMS sender', async () => {
    const env = { ...base, SMS_PROVIDER: 'none' };
    const http = await buildHttpRuntime(env);
    const reconciler = await buildReconcilerRuntime(env);
    const events = await buildProviderEventsRuntime(env);

    expect(http.deps.configuredChannels).toEqual(['email']);
    expect(reconciler.deps.channelProviders).toEqual({ email: 'ses', sms: 'none' });
    expect(Object.keys(reconciler.deps.lookups)).toEqual([]);
    expect([...events.webhooks.keys()]).toEqual([]);
    expect([...events.eventReaders.keys()]).toEqual(['aws.ses']);
    await expect(buildSenderRuntime('sms', env)).rejects.toThrow(
      'SMS_PROVIDER is none: this deployment sends no sms, so it runs no sms sender',
    );
    expect((await buildSenderRuntime('email', env)).provider).toBe('ses');
    // By default both channels are sent.
    expect((await buildHttpRuntime(base)).deps.configuredChannels).toEqual(['email', 'sms']);
  });
});

describe('each function holds the ledger ports its use cases name, and nothing more', () => {
  it('http, sender, reconciler and provider events each get their own cut of the one table', async () => {
    const methods = (store: object) => Object.keys(store).sort();
    const http = await buildHttpRuntime(base);
    const sender = await buildSenderRuntime('email', base);
    const reconciler = await buildReconcilerRuntime({ ...base, ...TWILIO });
    const events = await buildProviderEventsRuntime({ ...base, ...TWILIO });

    expect(methods(http.deps.store)).toEqual([
      'appendSuppression',
      'apply',
      'get',
      'getNotice',
      'getRows',
      'getSuppression',
      'getSuppressionHistory',
      'listFailed',
      'listOpen',
      'reserve',
      'reserveNotice',
      'settleEscalation',
    ]);
    expect(methods(sender.deps.store)).toEqual([
      'appendSuppression',
      'apply',
      'defer',
      'get',
      'getSuppression',
      'recordBatch',
      // The other channel of a channel fallback (docs/architecture.md §12).
      'reserve',
      'settleEscalation',
    ]);
    expect(methods(reconciler.deps.store)).toEqual([
      'appendSuppression',
      'apply',
      'countOpen',
      'defer',
      'get',
      'getBatch',
      'listDue',
      'readGate',
      'reserve',
      'settleEscalation',
    ]);
    expect(methods(events.deps.store)).toEqual(['appendSuppression', 'apply', 'get', 'reserve']);
  });

  it('a malformed send window or an unknown zone stops the start, naming the variable', async () => {
    await expect(buildHttpRuntime({ ...base, SMS_SEND_WINDOW: '8-21' })).rejects.toThrow('SMS_SEND_WINDOW');
    await expect(buildHttpRuntime({ ...base, SEND_WINDOW_TIME_ZONE: 'Mars/Olympus' })).rejects.toThrow(
      'SEND_WINDOW_TIME_ZONE',
    );
    expect(
      (await buildHttpRuntime({ ...base, EMAIL_SEND_WINDOW: '21:00-08:00' })).deps.sendWindows,
    ).toMatchObject({
      email: { opens: 1260, closes: 480 },
      defaultZone: 'UTC',
    });
  });
});

describe('the channel rate', () => {
  it('<CHANNEL>_SEND_RATE_PER_SECOND puts the shared rate budget behind the hold gate; 0 or unset leaves the gate alone', async () => {
    const paced = await buildSenderRuntime('sms', { ...base, ...TWILIO, SMS_SEND_RATE_PER_SECOND: '5' });
    const unpaced = await buildSenderRuntime('sms', { ...base, ...TWILIO, SMS_SEND_RATE_PER_SECOND: '0' });
    const unset = await buildSenderRuntime('sms', { ...base, ...TWILIO });
    expect(paced.deps.gate).toBeInstanceOf(BudgetSendGate);
    expect(unpaced.deps.gate).toBeInstanceOf(SharedSendGate);
    expect(unset.deps.gate).toBeInstanceOf(SharedSendGate);
    // The old name of the budget stops the start, naming the new one (docs/deploy.md "Vocabulary change").
    await expect(
      buildSenderRuntime('sms', { ...base, ...TWILIO, SMS_RATE_BUDGET_PER_SECOND: '5' }),
    ).rejects.toThrow('SMS_RATE_BUDGET_PER_SECOND was renamed: use SMS_SEND_RATE_PER_SECOND');
  });
});

describe('keys checked against the ledger table at cold start', () => {
  it('a function holding another fingerprint or envelope key than the table was first used with refuses to start', async () => {
    // Prepare: the first start records the table's keys.
    await buildHttpRuntime(base);

    // Act: the three starts at once, each settled before any is looked at (a rejection must not
    // wait unhandled while an earlier one is awaited).
    const [otherFingerprint, otherEnvelope, same] = await Promise.allSettled([
      buildHttpRuntime({ ...base, FINGERPRINT_KEY: key() }),
      buildSenderRuntime('email', { ...base, ENVELOPE_LOCAL_KEY: key() }),
      buildSenderRuntime('email', base),
    ]);

    // Assess
    const reason = (r: PromiseSettledResult<unknown> | undefined) =>
      r?.status === 'rejected' ? String((r.reason as Error).message) : `not refused (${r?.status})`;
    expect(reason(otherFingerprint)).toMatch(
      /^FINGERPRINT_KEY does not match the key this ledger table was first used with/,
    );
    expect(reason(otherEnvelope)).toMatch(/^ENVELOPE_LOCAL_KEY does not match/);
    expect(same?.status === 'fulfilled' ? same.value : same).toMatchObject({ provider: 'ses' });
  });
});
