import { readFileSync } from 'node:fs';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { z } from 'zod';
import { ConfigError } from '../lambdas/contract/config-error.ts';
import { FUNCTION_NAMES, type FunctionName } from '../lambdas/contract/functions.ts';
import type { ProviderChannel } from '../lambdas/contract/providers.ts';
import {
  INVARIANTS,
  SETTINGS,
  type Setting,
  type SettingName,
  senderTimeoutMs,
} from '../lambdas/contract/settings.ts';
import { PROVIDER_BINDINGS } from './providers/registry.ts';
import { SETTINGS_FILE } from './settings-file.ts';

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

export { FUNCTION_NAMES, type FunctionName, SETTINGS_FILE };

/**
 * Runtime settings a deployment chooses: the contract's settings that name a deployment key
 * (lambdas/contract/settings.ts), with their defaults and deployment ranges, written once there.
 * The delivery stack hands them to the functions under their runtime names.
 */
const RUNTIME_SETTINGS = (Object.entries(SETTINGS) as [SettingName, Setting][]).filter(
  (entry): entry is [SettingName, Setting & { deployKey: string }] =>
    entry[1].deployKey !== undefined &&
    (entry[1].kind === 'integer' || entry[1].kind === 'number' || entry[1].kind === 'enum'),
);

function runtimeDefault(setting: Setting): unknown {
  if (setting.kind === 'enum') return setting.default;
  if (setting.kind === 'integer' || setting.kind === 'number') {
    return setting.default === undefined ? undefined : setting.default / (setting.deployScale ?? 1);
  }
  return undefined;
}

function runtimeSchema(setting: Setting): z.ZodType {
  if (setting.kind === 'enum') return z.enum(setting.values as [string, ...string[]]);
  if (setting.kind === 'integer' || setting.kind === 'number') {
    const scale = setting.deployScale ?? 1;
    const base = setting.kind === 'integer' ? z.number().int() : z.number();
    return base
      .min(Math.ceil((setting.deployMin ?? setting.min) / scale))
      .max((setting.deployMax ?? setting.max) / scale);
  }
  return z.string();
}

/** The channel's default provider: the module that declares itself so (its descriptor). */
function defaultProvider(channel: ProviderChannel): string {
  const binding = PROVIDER_BINDINGS.find((b) =>
    (b.descriptor.defaultFor as readonly string[] | undefined)?.includes(channel),
  );
  return binding?.descriptor.id ?? '';
}

/** Documented defaults of every setting (see docs/deploy.md "Configure"). */
export const CORE_SETTING_DEFAULTS = {
  /**
   * Account and Region to deploy to, set together; '' → the CDK CLI's (credentials and profile
   * Region, passed to the app as CDK_DEFAULT_ACCOUNT / CDK_DEFAULT_REGION).
   */
  account: '',
  region: '',
  /** Prefix of stack names and of derived resource names (schedule group, configuration set). */
  stackPrefix: 'NoticeLedger',
  /** Provider of each channel (EMAIL_PROVIDER / SMS_PROVIDER): an id of lib/providers/registry.ts. */
  emailProvider: defaultProvider('email'),
  smsProvider: defaultProvider('sms'),
  /**
   * Providers no longer selected whose lookups and inbound events stay deployed while rows sent
   * through them are open (RETAINED_PROVIDERS; docs/architecture.md "Switching providers").
   */
  retainedProviders: [] as string[],
  /** E-mail address subscribed to the alarm topic; '' → no subscription. */
  alarmEmail: '',
  /** Origin providers call back (custom domain); '' → the HTTP API's execute-api endpoint. */
  publicBaseUrl: '',
  /** SQS event-source maximum concurrency (2–1000) per channel: the coarse provider cap. */
  emailMaxConcurrency: 5,
  smsMaxConcurrency: 2,
  /**
   * Known provider send rate per channel (messages per second the account or sender number is
   * allowed); 0 → no pacing (the shared throttle gate still reacts to 429s). It is the channel's
   * shared rate budget (`<CHANNEL>_RATE_BUDGET_PER_SECOND`, docs/architecture.md §11): every sender
   * instance books tokens from one item of the ledger table, so the rate holds whatever the
   * maximum concurrency.
   */
  emailSendRatePerSecond: 0,
  smsSendRatePerSecond: 0,
  /** Records per sender invocation; processed in parallel, each with its own provider call. */
  emailBatchSize: 10,
  smsBatchSize: 5,
  /** Days a terminal ledger row is kept before DynamoDB TTL removes it; 0 → kept forever. */
  ledgerRetentionDays: 400,
  /** CloudWatch Logs retention of every function and of the API access log. */
  logRetentionDays: 90,
  /** Default stage throttle of the HTTP API (requests per second, burst). */
  apiThrottleRateLimit: 50,
  apiThrottleBurstLimit: 100,
  /** Throttle of each unauthenticated provider webhook route (`POST /v1/provider-events/<id>`). */
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

/**
 * Every setting's default: the core ones above, the runtime ones from the contract (under their
 * deployment keys: `providerTimeoutMs` is PROVIDER_TIMEOUT_MS), and each provider binding's own.
 */
export const SETTING_DEFAULTS: Readonly<Record<string, unknown>> = {
  ...CORE_SETTING_DEFAULTS,
  ...Object.fromEntries(RUNTIME_SETTINGS.map(([, setting]) => [setting.deployKey, runtimeDefault(setting)])),
  ...Object.assign({}, ...PROVIDER_BINDINGS.map((b) => b.settings.defaults)),
};

export type SettingKey = string;

const VALID_LOG_RETENTION = new Set<number>(
  Object.values(RetentionDays).filter((v): v is number => typeof v === 'number' && v > 0),
);

const int = (min: number, max: number) => z.number().int().min(min).max(max);
const text = z.string().trim();

const CORE_SHAPE = {
  account: text.regex(/^(\d{12})?$/, 'a 12-digit account id, or empty'),
  region: text.regex(/^([a-z]{2}(-[a-z]+)+-\d+)?$/, 'a Region code such as eu-west-1, or empty'),
  stackPrefix: text.regex(/^[A-Za-z][A-Za-z0-9]{0,39}$/, 'letters and digits, starting with a letter'),
  emailProvider: text,
  smsProvider: text,
  retainedProviders: z.array(text.min(1)),
  alarmEmail: text.regex(/^([^@\s]+@[^@\s]+\.[^@\s]+)?$/, 'an e-mail address, or empty'),
  publicBaseUrl: text.regex(/^(https:\/\/[^\s/]+(\/[^\s]*)?)?$/, 'an https URL'),
  emailMaxConcurrency: int(2, 1000),
  smsMaxConcurrency: int(2, 1000),
  emailSendRatePerSecond: z.number().min(0).max(100_000),
  smsSendRatePerSecond: z.number().min(0).max(100_000),
  emailBatchSize: int(1, 100),
  smsBatchSize: int(1, 100),
  ledgerRetentionDays: int(0, 36_500),
  logRetentionDays: z
    .number()
    .int()
    .refine((d) => VALID_LOG_RETENTION.has(d), 'a CloudWatch Logs retention (1, 3, 5, 7, 14, 30, 60, 90, …)'),
  apiThrottleRateLimit: int(1, 10_000),
  apiThrottleBurstLimit: int(1, 5_000),
  providerCallbackRateLimit: int(1, 10_000),
  providerCallbackBurstLimit: int(1, 5_000),
  memorySize: int(128, 10_240),
  oldestUnresolvedAlarmSeconds: int(60, 7 * 86_400),
  queueAgeAlarmSeconds: int(60, 14 * 86_400),
  reservedConcurrency: z.partialRecord(z.enum(FUNCTION_NAMES), int(1, 1000)),
};

type CoreSettings = z.infer<z.ZodObject<typeof CORE_SHAPE>>;

/** Core, runtime (from the contract) and provider settings; any other key is an error. */
const SettingsSchema = z
  .object({
    ...CORE_SHAPE,
    ...Object.fromEntries(RUNTIME_SETTINGS.map(([, setting]) => [setting.deployKey, runtimeSchema(setting)])),
    ...Object.assign({}, ...PROVIDER_BINDINGS.map((b) => b.settings.shape)),
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
  /** Each channel's provider, and those retained for the rows they may still hold. */
  readonly providers: {
    readonly email: string;
    readonly sms: string;
    readonly retained: readonly string[];
  };
  /** The parsed settings, for the provider bindings (lib/providers/binding.ts `bindingSettings`). */
  readonly settings: Readonly<Record<string, unknown>>;
  /**
   * The runtime settings as the functions read them (`PROVIDER_TIMEOUT_MS` …), from the
   * contract's names and each deployment key's value (× its scale).
   */
  readonly runtimeEnvironment: Readonly<Record<string, string>>;
  readonly alarmEmail: string | undefined;
  readonly publicBaseUrl: string | undefined;
  readonly channels: {
    readonly email: ChannelSettings;
    readonly sms: ChannelSettings;
  };
  /** The runtime settings the stack itself builds on (function timeouts, the schedule). */
  readonly runtime: {
    readonly providerTimeoutMs: number;
    readonly sendLeaseMs: number;
    readonly reconcileIntervalMinutes: number;
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
    throw new ConfigError(
      `${name} cannot be read (${(error as Error).message}); it holds the deployment settings`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${name} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(`${name} must hold one JSON object of settings`);
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
    throw new ConfigError(`invalid ${source}: ${parsed.error.issues.map(describeIssue).join('; ')}`);
  }
  // Runtime settings by deployment key are typed by the contract, not by this schema.
  const c = parsed.data as unknown as CoreSettings & Readonly<Record<string, unknown>>;
  const resourcePrefix = kebab(c.stackPrefix);
  const runtimeEnvironment = Object.fromEntries(
    RUNTIME_SETTINGS.map(([name, setting]) => {
      const value = c[setting.deployKey] as number | string;
      const scale = setting.kind === 'integer' || setting.kind === 'number' ? (setting.deployScale ?? 1) : 1;
      return [name, String(typeof value === 'number' ? value * scale : value)];
    }),
  );
  const timings = {
    PROVIDER_TIMEOUT_MS: Number(runtimeEnvironment.PROVIDER_TIMEOUT_MS),
    SEND_LEASE_MS: Number(runtimeEnvironment.SEND_LEASE_MS),
    RETRY_BASE_MS: Number(runtimeEnvironment.RETRY_BASE_MS),
    RETRY_CAP_MS: Number(runtimeEnvironment.RETRY_CAP_MS),
  };
  const senderTimeoutSeconds = senderTimeoutMs(timings.PROVIDER_TIMEOUT_MS) / 1000;
  // A sender must be gone before its lease expires: the reconciler turns an expired `sending`
  // lease into `unknown` on the assumption that the worker holding it is dead.
  if (senderTimeoutSeconds * 1000 >= timings.SEND_LEASE_MS) {
    throw new ConfigError(
      `sendLeaseMs (${timings.SEND_LEASE_MS}) must exceed the sender timeout (${senderTimeoutSeconds} s, ` +
        `2 × providerTimeoutMs + 10 s): raise sendLeaseMs or lower providerTimeoutMs`,
    );
  }
  for (const rule of INVARIANTS) {
    if (!rule.holds(timings))
      throw new ConfigError(`invalid ${source}: ${deployWords(rule.message(timings))}`);
  }
  for (const channel of ['email', 'sms'] as const) {
    const reserved = c.reservedConcurrency[channel === 'email' ? 'sendEmail' : 'sendSms'];
    const cap = channel === 'email' ? c.emailMaxConcurrency : c.smsMaxConcurrency;
    // Lambda's advice: a maximum concurrency above the reserved concurrency throttles messages.
    if (reserved !== undefined && reserved < cap) {
      throw new ConfigError(
        `reservedConcurrency of the ${channel} sender (${reserved}) is below ${channel}MaxConcurrency (${cap})`,
      );
    }
  }
  if (Boolean(c.account) !== Boolean(c.region)) {
    throw new ConfigError(
      `invalid ${source}: account and region are set together (both pin the deployment) or both left empty`,
    );
  }
  const providers = checkProviders(c.emailProvider, c.smsProvider, c.retainedProviders, source);
  return {
    target: c.account ? { account: c.account, region: c.region } : undefined,
    stackPrefix: c.stackPrefix,
    resourcePrefix,
    providers,
    settings: c,
    runtimeEnvironment,
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
      providerTimeoutMs: timings.PROVIDER_TIMEOUT_MS,
      sendLeaseMs: timings.SEND_LEASE_MS,
      reconcileIntervalMinutes: Number(runtimeEnvironment.RECONCILE_INTERVAL_MS) / 60_000,
    },
    openIndexShards: Number(runtimeEnvironment.OPEN_INDEX_SHARDS),
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

/** A runtime invariant's message in deployment words (`SEND_LEASE_MS` → `sendLeaseMs`). */
function deployWords(message: string): string {
  return message.replace(/\b[A-Z][A-Z0-9_]+\b/g, (name) => {
    const setting = (SETTINGS as Readonly<Record<string, Setting>>)[name];
    return setting?.deployKey ?? name;
  });
}

/**
 * The channels' providers must be registered (lib/providers/registry.ts) and serve their channel;
 * retained ones must be registered. Messages name the setting and the ids there are.
 */
function checkProviders(
  email: string,
  sms: string,
  retained: readonly string[],
  source: string,
): NoticeLedgerConfig['providers'] {
  const ids = PROVIDER_BINDINGS.map((b) => b.descriptor.id);
  const check = (key: string, id: string, channel?: ProviderChannel) => {
    const binding = PROVIDER_BINDINGS.find((b) => b.descriptor.id === id);
    if (!binding) throw new ConfigError(`invalid ${source}: ${key}: no provider "${id}" (${ids.join(', ')})`);
    if (channel && !(binding.descriptor.channels as readonly string[]).includes(channel)) {
      throw new ConfigError(`invalid ${source}: ${key}: provider "${id}" does not send ${channel}`);
    }
  };
  check('emailProvider', email, 'email');
  check('smsProvider', sms, 'sms');
  for (const id of retained) check('retainedProviders', id);
  return { email, sms, retained: [...new Set(retained)].filter((id) => id !== email && id !== sms) };
}
