import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { KMSClient } from '@aws-sdk/client-kms';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { templateCatalog } from '../templates/catalog.ts';
import { AesGcmEnvelopeSealer, StaticDataKeySource } from './adapters/crypto/aes-gcm-envelope-sealer.ts';
import { KmsDataKeySource } from './adapters/crypto/kms-data-key-source.ts';
import { DynamoDbLedgerStore } from './adapters/dynamodb/dynamodb-ledger-store.ts';
import {
  EventBridgeEscalationPublisher,
  LogEscalationPublisher,
} from './adapters/eventbridge/escalation-publishers.ts';
import { HybridRetryScheduler } from './adapters/scheduler/retry-scheduler.ts';
import { createSesClient, SesEmailTransport } from './adapters/ses/ses-email-transport.ts';
import { SesProviderLookup } from './adapters/ses/ses-provider-lookup.ts';
import { SqsIntentQueue } from './adapters/sqs/sqs-intent-queue.ts';
import { TwilioProviderLookup } from './adapters/twilio/twilio-provider-lookup.ts';
import { TwilioSmsTransport } from './adapters/twilio/twilio-sms-transport.ts';
import { type Config, ConfigError, readConfig } from './edge/config.ts';
import { logger } from './handlers/observability.ts';
import { systemClock } from './ports/clock.port.ts';
import type { Dependencies } from './use-cases/dependencies.ts';
import type { ReconcilerDependencies } from './use-cases/reconcile.ts';
import { SharedSendGate } from './use-cases/shared-send-gate.ts';

export interface TwilioCredentials {
  readonly accountSid: string;
  readonly authToken: string;
  readonly from: string;
}

export interface Runtime {
  readonly config: Config;
  readonly deps: Dependencies;
  readonly reconciler: ReconcilerDependencies;
  readonly twilio: TwilioCredentials | undefined;
  /** Origin providers call back; status callbacks are signed over it. */
  readonly publicBaseUrl: string | undefined;
}

async function secretJson(client: SecretsManagerClient, arn: string): Promise<Record<string, string>> {
  const out = await client.send(new GetSecretValueCommand({ SecretId: arn }));
  if (!out.SecretString) throw new ConfigError(`secret ${arn} has no string value`);
  return JSON.parse(out.SecretString) as Record<string, string>;
}

function key32(base64: string, name: string): Uint8Array {
  const key = Buffer.from(base64, 'base64');
  if (key.length !== 32) throw new ConfigError(`${name} must be base64 of 32 bytes`);
  return new Uint8Array(key);
}

async function loadSecrets(config: Config) {
  const secrets =
    config.FINGERPRINT_KEY_SECRET_ARN || config.TWILIO_SECRET_ARN ? new SecretsManagerClient({}) : undefined;
  let fingerprintKey: Uint8Array;
  if (config.FINGERPRINT_KEY_SECRET_ARN && secrets) {
    const value = await secretJson(secrets, config.FINGERPRINT_KEY_SECRET_ARN);
    fingerprintKey = key32(value.key ?? '', 'fingerprint secret field "key"');
  } else if (config.FINGERPRINT_KEY) {
    fingerprintKey = key32(config.FINGERPRINT_KEY, 'FINGERPRINT_KEY');
  } else {
    throw new ConfigError('FINGERPRINT_KEY or FINGERPRINT_KEY_SECRET_ARN is required');
  }
  let twilio: TwilioCredentials | undefined;
  if (config.TWILIO_SECRET_ARN && secrets) {
    const value = await secretJson(secrets, config.TWILIO_SECRET_ARN);
    if (value.accountSid && value.authToken && value.from) {
      twilio = { accountSid: value.accountSid, authToken: value.authToken, from: value.from };
    }
  } else if (config.TWILIO_ACCOUNT_SID && config.TWILIO_AUTH_TOKEN && config.TWILIO_FROM) {
    twilio = {
      accountSid: config.TWILIO_ACCOUNT_SID,
      authToken: config.TWILIO_AUTH_TOKEN,
      from: config.TWILIO_FROM,
    };
  }
  return { fingerprintKey, twilio };
}

/**
 * Builds real adapters from the environment, once per process (a Lambda cold start, or the
 * local stack). Endpoints come from the SDK's own `AWS_ENDPOINT_URL_<SERVICE>` variables.
 */
export async function buildRuntime(env: Record<string, string | undefined> = process.env): Promise<Runtime> {
  const config = readConfig(env);
  const { fingerprintKey, twilio } = await loadSecrets(config);

  const store = new DynamoDbLedgerStore({
    client: new DynamoDBClient({}),
    tableName: config.LEDGER_TABLE_NAME,
    openShards: config.OPEN_INDEX_SHARDS,
    ...(config.RETENTION_DAYS ? { retentionMs: config.RETENTION_DAYS * 86_400_000 } : {}),
  });
  const queue = new SqsIntentQueue(new SQSClient({}), {
    ...(config.EMAIL_QUEUE_URL ? { email: config.EMAIL_QUEUE_URL } : {}),
    ...(config.SMS_QUEUE_URL ? { sms: config.SMS_QUEUE_URL } : {}),
  });
  const scheduler = new HybridRetryScheduler(
    queue,
    config.SCHEDULER_ROLE_ARN
      ? {
          client: new SchedulerClient({}),
          groupName: config.SCHEDULE_GROUP_NAME,
          roleArn: config.SCHEDULER_ROLE_ARN,
          queueArns: {
            ...(config.EMAIL_QUEUE_ARN ? { email: config.EMAIL_QUEUE_ARN } : {}),
            ...(config.SMS_QUEUE_ARN ? { sms: config.SMS_QUEUE_ARN } : {}),
          },
        }
      : undefined,
  );
  let sealer: AesGcmEnvelopeSealer;
  if (config.ENVELOPE_KMS_KEY_ID) {
    sealer = new AesGcmEnvelopeSealer(new KmsDataKeySource(new KMSClient({}), config.ENVELOPE_KMS_KEY_ID));
  } else if (config.ENVELOPE_LOCAL_KEY) {
    sealer = new AesGcmEnvelopeSealer(
      new StaticDataKeySource(key32(config.ENVELOPE_LOCAL_KEY, 'ENVELOPE_LOCAL_KEY')),
    );
  } else {
    throw new ConfigError('ENVELOPE_KMS_KEY_ID or ENVELOPE_LOCAL_KEY is required');
  }
  const escalations = config.ESCALATION_EVENT_BUS
    ? new EventBridgeEscalationPublisher(new EventBridgeClient({}), config.ESCALATION_EVENT_BUS)
    : new LogEscalationPublisher((record) => logger.warn('escalation', record));

  const email = new SesEmailTransport({
    client: createSesClient({ timeoutMs: config.PROVIDER_TIMEOUT_MS }),
    fromAddress: config.SES_FROM_ADDRESS,
    configurationSetName: config.SES_CONFIGURATION_SET,
    timeoutMs: config.PROVIDER_TIMEOUT_MS,
  });
  const publicBaseUrl = config.PUBLIC_BASE_URL?.replace(/\/+$/, '');
  const sms = twilio
    ? new TwilioSmsTransport({
        baseUrl: config.TWILIO_BASE_URL,
        accountSid: twilio.accountSid,
        authToken: twilio.authToken,
        from: twilio.from,
        statusCallbackUrl: publicBaseUrl ? `${publicBaseUrl}/v1/provider-events/twilio` : undefined,
        // The callback names its intent (`?ref=ntc_…-sms`): it can settle a row whose own
        // outcome was ambiguous, before any SID was recorded. Twilio signs the full URL.
        callbackCorrelationParam: 'ref',
        timeoutMs: config.PROVIDER_TIMEOUT_MS,
      })
    : undefined;

  const deps: Dependencies = {
    store,
    queue,
    scheduler,
    escalations,
    sealer,
    catalog: templateCatalog,
    clock: systemClock,
    random: Math.random,
    fingerprintKey,
    timing: { leaseMs: config.SEND_LEASE_MS },
    retryPolicy: {
      baseMs: config.RETRY_BASE_MS,
      capMs: config.RETRY_CAP_MS,
      maxAttempts: config.MAX_ATTEMPTS,
    },
    defaultDeadlineMs: config.NOTICE_DEFAULT_DEADLINE_MS,
    transports: { email, ...(sms ? { sms } : {}) },
    workerId: `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`,
    gate: new SharedSendGate({
      store,
      clock: systemClock,
      ratePerSecond: {
        ...(config.EMAIL_SEND_RATE_PER_SECOND ? { email: config.EMAIL_SEND_RATE_PER_SECOND } : {}),
        ...(config.SMS_SEND_RATE_PER_SECOND ? { sms: config.SMS_SEND_RATE_PER_SECOND } : {}),
      },
    }),
  };
  const reconciler: ReconcilerDependencies = {
    ...deps,
    lookups: {
      email: new SesProviderLookup(),
      ...(twilio
        ? {
            sms: new TwilioProviderLookup({
              baseUrl: config.TWILIO_BASE_URL,
              accountSid: twilio.accountSid,
              authToken: twilio.authToken,
              timeoutMs: config.PROVIDER_TIMEOUT_MS,
            }),
          }
        : {}),
    },
    unknownGraceMs: config.UNKNOWN_GRACE_MS,
    unknownPolicy: config.UNKNOWN_POLICY,
    recheckMs: config.RECONCILE_INTERVAL_MS,
  };
  return { config, deps, reconciler, twilio, publicBaseUrl };
}

let runtime: Promise<Runtime> | undefined;

/** The process-wide runtime; a failed build is retried on the next call instead of cached. */
export function getRuntime(): Promise<Runtime> {
  if (!runtime) {
    runtime = buildRuntime().catch((error: unknown) => {
      runtime = undefined;
      throw error;
    });
  }
  return runtime;
}
