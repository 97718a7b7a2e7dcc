import { readFileSync } from 'node:fs';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { z } from 'zod';

/**
 * Deployment settings, read once from one versioned file, {@link SETTINGS_FILE}, that the
 * operator edits and commits: every `cdk synth`, `cdk diff` and `cdk deploy` reads the same
 * values, so an update cannot silently fall back to a default that an earlier deploy overrode.
 * CDK context (`-c key=value`, cdk.json) is refused for these keys (lib/app.ts). Nothing else in
 * `lib/` reads settings or `process.env`: stacks and constructs receive a typed
 * {@link NoticeLedgerConfig}.
 *
 * Every key is optional; {@link SETTING_DEFAULTS} documents the defaults, docs/deploy.md lists
 * them (a test keeps the two in step). A key that is not a setting is an error, not ignored.
 */

/** The settings file, relative to the repository root. */
export const SETTINGS_FILE = 'deploy/settings.json';

/** The functions the delivery stack deploys; keys of per-function settings. */
export const FUNCTION_NAMES = ['http', 'sendEmail', 'sendSms', 'reconciler', 'sesEvents'] as const;
export type FunctionName = (typeof FUNCTION_NAMES)[number];

/** Documented defaults of every setting (see docs/deploy.md "Configure"). */
export const SETTING_DEFAULTS = {
  /**
   * Account and Region to deploy to, set together; '' → the CDK CLI's (credentials and profile
   * Region, passed to the app as CDK_DEFAULT_ACCOUNT / CDK_DEFAULT_REGION).
   */
  account: '',
  region: '',
  /** Prefix of stack names and of derived resource names (schedule group, configuration set). */
  stackPrefix: 'NoticeLedger',
  /** SES sender (`From`). Its identity must be verified in SES before the first e-mail. */
  sesFromAddress: 'notices@example.com',
  /** Verified SES identity that authorises the sender; '' → the domain of sesFromAddress. */
  sesIdentity: '',
  /** More identities the e-mail sender may use: in the SES sandbox, the verified recipients. */
  sesAdditionalIdentities: [] as string[],
  /** SES configuration set created by the stack; '' → kebab-case stackPrefix. */
  sesConfigurationSetName: '',
  /** Refuse delivery to receiving servers that do not offer TLS. */
  sesRequireTls: true,
  /** Existing Twilio secret (complete ARN) to use; '' → the stack creates an empty one to fill in. */
  twilioSecretArn: '',
  /** E-mail address subscribed to the alarm topic; '' → no subscription. */
  alarmEmail: '',
  /** Origin providers call back (custom domain); '' → the HTTP API's execute-api endpoint. */
  publicBaseUrl: '',
  /** SQS event-source maximum concurrency (2–1000) per channel: the coarse provider cap. */
  emailMaxConcurrency: 5,
  smsMaxConcurrency: 2,
  /**
   * Known provider send rate per channel (messages per second: SES `MaxSendRate`, Twilio MPS of
   * the sender number); 0 → no pacing (the shared throttle gate still reacts to 429s). Each
   * sender instance paces at rate ÷ maximum concurrency.
   */
  emailSendRatePerSecond: 0,
  smsSendRatePerSecond: 0,
  /** Records per sender invocation; processed in parallel, each with its own provider call. */
  emailBatchSize: 10,
  smsBatchSize: 5,
  /** Runtime settings (DESIGN §6); the same names (in upper snake case) configure the local stack. */
  providerTimeoutMs: 10_000,
  sendLeaseMs: 60_000,
  reconcileIntervalMinutes: 1,
  unknownGraceMs: 600_000,
  unknownPolicy: 'escalate' as 'escalate' | 'resend',
  retryBaseMs: 1_000,
  retryCapMs: 900_000,
  maxAttempts: 8,
  noticeDefaultDeadlineMs: 86_400_000,
  openIndexShards: 4,
  /** Days a terminal ledger row is kept before DynamoDB TTL removes it; 0 → kept forever. */
  ledgerRetentionDays: 400,
  /** CloudWatch Logs retention of every function and of the API access log. */
  logRetentionDays: 90,
  /** Default stage throttle of the HTTP API (requests per second, burst). */
  apiThrottleRateLimit: 50,
  apiThrottleBurstLimit: 100,
  /** Throttle of the unauthenticated Twilio callback route. */
  providerCallbackRateLimit: 20,
  providerCallbackBurstLimit: 40,
  /** Memory of every function (MB). */
  memorySize: 512,
  /** Alarm when the oldest unresolved intent is older than this (seconds). */
  oldestUnresolvedAlarmSeconds: 3_600,
  /** Alarm when a channel queue's oldest message is older than this (seconds). */
  queueAgeAlarmSeconds: 900,
  /**
   * Reserved concurrency per function, e.g. `{ "reconciler": 1 }`. Unset by default: an account
   * must keep 100 unreserved executions, so new accounts (limit 10) cannot reserve any.
   */
  reservedConcurrency: {} as Partial<Record<FunctionName, number>>,
} as const;

export type SettingKey = keyof typeof SETTING_DEFAULTS;

/** The placeholder sender: SES rejects every message from it (nobody can verify example.com). */
export const PLACEHOLDER_SENDER = SETTING_DEFAULTS.sesFromAddress;

const VALID_LOG_RETENTION = new Set<number>(
  Object.values(RetentionDays).filter((v): v is number => typeof v === 'number' && v > 0),
);

const int = (min: number, max: number) => z.number().int().min(min).max(max);
const text = z.string().trim();

const SettingsSchema = z
  .object({
    account: text.regex(/^(\d{12})?$/, 'a 12-digit account id, or empty'),
    region: text.regex(/^([a-z]{2}(-[a-z]+)+-\d+)?$/, 'a Region code such as eu-west-1, or empty'),
    stackPrefix: text.regex(/^[A-Za-z][A-Za-z0-9]{0,39}$/, 'letters and digits, starting with a letter'),
    sesFromAddress: text.regex(/^[^@\s]+@[^@\s]+\.[^@\s]+$/, 'an e-mail address'),
    sesIdentity: text,
    sesAdditionalIdentities: z.array(text.min(1)),
    sesConfigurationSetName: text.regex(/^[A-Za-z0-9_-]{0,64}$/, 'letters, digits, _ and -'),
    sesRequireTls: z.boolean(),
    twilioSecretArn: text.regex(/^(arn:[^:]+:secretsmanager:[^:]+:\d{12}:secret:.+-[A-Za-z0-9]{6})?$/, {
      message: 'a complete secret ARN (with its 6-character suffix)',
    }),
    alarmEmail: text.regex(/^([^@\s]+@[^@\s]+\.[^@\s]+)?$/, 'an e-mail address, or empty'),
    publicBaseUrl: text.regex(/^(https:\/\/[^\s/]+(\/[^\s]*)?)?$/, 'an https URL'),
    emailMaxConcurrency: int(2, 1000),
    smsMaxConcurrency: int(2, 1000),
    emailSendRatePerSecond: z.number().min(0).max(100_000),
    smsSendRatePerSecond: z.number().min(0).max(100_000),
    emailBatchSize: int(1, 100),
    smsBatchSize: int(1, 100),
    providerTimeoutMs: int(1_000, 60_000),
    sendLeaseMs: int(10_000, 3_600_000),
    reconcileIntervalMinutes: int(1, 60),
    unknownGraceMs: int(60_000, 7 * 86_400_000),
    unknownPolicy: z.enum(['escalate', 'resend']),
    retryBaseMs: int(100, 3_600_000),
    retryCapMs: int(1_000, 86_400_000),
    maxAttempts: int(1, 100),
    noticeDefaultDeadlineMs: int(60_000, 30 * 86_400_000),
    openIndexShards: int(1, 64),
    ledgerRetentionDays: int(0, 36_500),
    logRetentionDays: z
      .number()
      .int()
      .refine(
        (d) => VALID_LOG_RETENTION.has(d),
        'a CloudWatch Logs retention (1, 3, 5, 7, 14, 30, 60, 90, …)',
      ),
    apiThrottleRateLimit: int(1, 10_000),
    apiThrottleBurstLimit: int(1, 5_000),
    providerCallbackRateLimit: int(1, 10_000),
    providerCallbackBurstLimit: int(1, 5_000),
    memorySize: int(128, 10_240),
    oldestUnresolvedAlarmSeconds: int(60, 7 * 86_400),
    queueAgeAlarmSeconds: int(60, 14 * 86_400),
    reservedConcurrency: z.partialRecord(z.enum(FUNCTION_NAMES), int(1, 1000)),
  })
  .strict();

export interface ChannelSettings {
  readonly maxConcurrency: number;
  readonly batchSize: number;
  /** Provider rate (messages/s) the channel's senders share; undefined → unpaced. */
  readonly sendRatePerSecond: number | undefined;
}

/** What the stacks are built from. Durations are derived once here so every user agrees. */
export interface NoticeLedgerConfig {
  /** Account and Region the settings pin; undefined → the CDK CLI's. */
  readonly target: { readonly account: string; readonly region: string } | undefined;
  readonly stackPrefix: string;
  /** kebab-case form of stackPrefix, for physical names. */
  readonly resourcePrefix: string;
  readonly ses: {
    readonly fromAddress: string;
    readonly identity: string;
    readonly additionalIdentities: readonly string[];
    readonly configurationSetName: string;
    readonly requireTls: boolean;
  };
  readonly twilioSecretArn: string | undefined;
  readonly alarmEmail: string | undefined;
  readonly publicBaseUrl: string | undefined;
  readonly channels: {
    readonly email: ChannelSettings;
    readonly sms: ChannelSettings;
  };
  readonly runtime: {
    readonly providerTimeoutMs: number;
    readonly sendLeaseMs: number;
    readonly reconcileIntervalMinutes: number;
    readonly unknownGraceMs: number;
    readonly unknownPolicy: 'escalate' | 'resend';
    readonly retryBaseMs: number;
    readonly retryCapMs: number;
    readonly maxAttempts: number;
    readonly noticeDefaultDeadlineMs: number;
  };
  readonly openIndexShards: number;
  readonly ledgerRetentionDays: number | undefined;
  readonly logRetention: RetentionDays;
  readonly api: {
    readonly rateLimit: number;
    readonly burstLimit: number;
    readonly callbackRateLimit: number;
    readonly callbackBurstLimit: number;
  };
  readonly memorySize: number;
  /**
   * Sender timeout: two provider timeouts (a batch's records run in parallel, so one call bounds
   * the batch) plus ten seconds for the ledger writes around it and a cold start.
   */
  readonly senderTimeoutSeconds: number;
  readonly alarms: { readonly oldestUnresolvedSeconds: number; readonly queueAgeSeconds: number };
  readonly reservedConcurrency: Readonly<Partial<Record<FunctionName, number>>>;
}

export class ConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigurationError';
  }
}

function kebab(value: string): string {
  return value
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();
}

/**
 * Reads {@link SETTINGS_FILE} (or another settings file). A missing or malformed file is an
 * error: falling back to the defaults would deploy something else than what was committed.
 */
export function loadSettings(path: string, name = SETTINGS_FILE): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigurationError(
      `${name} cannot be read (${(error as Error).message}); it holds the deployment settings`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigurationError(`${name} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigurationError(`${name} must hold one JSON object of settings`);
  }
  return value as Record<string, unknown>;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') {
    if (issue.path.length > 0) return `${issue.path.join('.')}: unexpected keys ${issue.keys.join(', ')}`;
    return issue.keys.map((key) => `${key}: not a setting (docs/deploy.md lists them)`).join('; ');
  }
  return `${issue.path.join('.')}: ${issue.message}`;
}

/**
 * Checks the settings (absent keys take their {@link SETTING_DEFAULTS}) and derives the
 * configuration. Every message names the setting; `source` names where the settings came from.
 */
export function readConfig(
  settings: Readonly<Record<string, unknown>>,
  source = SETTINGS_FILE,
): NoticeLedgerConfig {
  const raw: Record<string, unknown> = { ...SETTING_DEFAULTS };
  for (const [key, value] of Object.entries(settings)) {
    // `$schema` and `//` comments are for editors and readers.
    if (key === '$schema' || key.startsWith('//')) continue;
    raw[key] = value;
  }
  const parsed = SettingsSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigurationError(`invalid ${source}: ${parsed.error.issues.map(describeIssue).join('; ')}`);
  }
  const c = parsed.data;
  const resourcePrefix = kebab(c.stackPrefix);
  const senderTimeoutSeconds = 2 * Math.ceil(c.providerTimeoutMs / 1000) + 10;
  // A sender must be gone before its lease expires: the reconciler turns an expired `sending`
  // lease into `unknown` on the assumption that the worker holding it is dead.
  if (senderTimeoutSeconds * 1000 >= c.sendLeaseMs) {
    throw new ConfigurationError(
      `sendLeaseMs (${c.sendLeaseMs}) must exceed the sender timeout (${senderTimeoutSeconds} s, ` +
        `2 × providerTimeoutMs + 10 s): raise sendLeaseMs or lower providerTimeoutMs`,
    );
  }
  if (c.retryCapMs < c.retryBaseMs) throw new ConfigurationError('retryCapMs must be ≥ retryBaseMs');
  for (const channel of ['email', 'sms'] as const) {
    const reserved = c.reservedConcurrency[channel === 'email' ? 'sendEmail' : 'sendSms'];
    const cap = channel === 'email' ? c.emailMaxConcurrency : c.smsMaxConcurrency;
    // Lambda's advice: a maximum concurrency above the reserved concurrency throttles messages.
    if (reserved !== undefined && reserved < cap) {
      throw new ConfigurationError(
        `reservedConcurrency of the ${channel} sender (${reserved}) is below ${channel}MaxConcurrency (${cap})`,
      );
    }
  }
  if (Boolean(c.account) !== Boolean(c.region)) {
    throw new ConfigurationError(
      `invalid ${source}: account and region are set together (both pin the deployment) or both left empty`,
    );
  }
  const fromDomain = c.sesFromAddress.split('@')[1] as string;
  return {
    target: c.account ? { account: c.account, region: c.region } : undefined,
    stackPrefix: c.stackPrefix,
    resourcePrefix,
    ses: {
      fromAddress: c.sesFromAddress,
      identity: c.sesIdentity || fromDomain,
      additionalIdentities: c.sesAdditionalIdentities,
      configurationSetName: c.sesConfigurationSetName || resourcePrefix,
      requireTls: c.sesRequireTls,
    },
    twilioSecretArn: c.twilioSecretArn || undefined,
    alarmEmail: c.alarmEmail || undefined,
    publicBaseUrl: c.publicBaseUrl ? c.publicBaseUrl.replace(/\/+$/, '') : undefined,
    channels: {
      email: {
        maxConcurrency: c.emailMaxConcurrency,
        batchSize: c.emailBatchSize,
        sendRatePerSecond: c.emailSendRatePerSecond || undefined,
      },
      sms: {
        maxConcurrency: c.smsMaxConcurrency,
        batchSize: c.smsBatchSize,
        sendRatePerSecond: c.smsSendRatePerSecond || undefined,
      },
    },
    runtime: {
      providerTimeoutMs: c.providerTimeoutMs,
      sendLeaseMs: c.sendLeaseMs,
      reconcileIntervalMinutes: c.reconcileIntervalMinutes,
      unknownGraceMs: c.unknownGraceMs,
      unknownPolicy: c.unknownPolicy,
      retryBaseMs: c.retryBaseMs,
      retryCapMs: c.retryCapMs,
      maxAttempts: c.maxAttempts,
      noticeDefaultDeadlineMs: c.noticeDefaultDeadlineMs,
    },
    openIndexShards: c.openIndexShards,
    ledgerRetentionDays: c.ledgerRetentionDays > 0 ? c.ledgerRetentionDays : undefined,
    logRetention: c.logRetentionDays as RetentionDays,
    api: {
      rateLimit: c.apiThrottleRateLimit,
      burstLimit: c.apiThrottleBurstLimit,
      callbackRateLimit: c.providerCallbackRateLimit,
      callbackBurstLimit: c.providerCallbackBurstLimit,
    },
    memorySize: c.memorySize,
    senderTimeoutSeconds,
    alarms: {
      oldestUnresolvedSeconds: c.oldestUnresolvedAlarmSeconds,
      queueAgeSeconds: c.queueAgeAlarmSeconds,
    },
    reservedConcurrency: c.reservedConcurrency,
  };
}
