import { readFileSync } from 'node:fs';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { z } from 'zod';
import { ConfigError } from '../lambdas/contract/config-error.ts';
import { formatDuration, parseIsoDuration } from '../lambdas/contract/duration.ts';
import { FUNCTION_NAMES, type FunctionName } from '../lambdas/contract/functions.ts';
import { invalidPrincipalEntries } from '../lambdas/contract/principals.ts';
import type { ProviderChannel } from '../lambdas/contract/providers.ts';
import { retiredNamesMessage } from '../lambdas/contract/retired-settings.ts';
import {
  CHANNEL_SETTINGS,
  type DeployKeyOf,
  deployKeyOf,
  INVARIANTS,
  NO_PROVIDER,
  OPERATOR_SETTING_NAMES,
  OPERATOR_SETTINGS,
  type OperatorSettingName,
  type Setting,
  senderTimeoutMs,
} from '../lambdas/contract/settings.ts';
import {
  CAPACITY_MODES,
  type CapacityRange,
  type ReadWriteRange,
  TABLE_CAPACITY_DEFAULTS,
  type TableCapacity,
} from '../lambdas/contract/table-capacity.ts';
import { type OutcomeConfig, outcomeConfig } from './outcome-config.ts';
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
 * One vocabulary: a key that sets a variable is that variable's name in camelCase
 * (`EMAIL_BATCH_MAX` ↔ `emailBatchMax`), for the core settings (lambdas/contract/settings.ts) and
 * the providers' (lib/providers/binding-settings.ts) alike. Every key is optional;
 * {@link SETTING_DEFAULTS} documents the defaults, docs/deploy.md and docs/configuration.md list
 * them (tests keep them in step). A key that is not a setting is an error, not ignored.
 */

export { FUNCTION_NAMES, type FunctionName, SETTINGS_FILE };

/**
 * The operator's runtime settings (lambdas/contract/settings.ts `OPERATOR_SETTINGS`), each under
 * its deployment key: the variable's name in camelCase (`deployKeyOf`), same unit, same meaning.
 * Their defaults and ranges are written once there. Wiring settings (queue URLs, ARNs, the table)
 * are never deployment settings: the stack sets them from the resources it creates.
 */
const OPERATOR_ENTRIES = OPERATOR_SETTING_NAMES.map((name) => {
  const setting: Setting = OPERATOR_SETTINGS[name];
  return { name, setting, key: deployKeyOf(name) };
});

/** A provider id default: the module that declares itself the channel's default (its descriptor). */
const PROVIDER_DEFAULTS: Partial<Record<OperatorSettingName, ProviderChannel>> = {
  [CHANNEL_SETTINGS.email.provider]: 'email',
  [CHANNEL_SETTINGS.sms.provider]: 'sms',
};

function deploymentDefault(name: OperatorSettingName, setting: Setting): unknown {
  const channel = PROVIDER_DEFAULTS[name];
  if (channel) return defaultProvider(channel);
  switch (setting.kind) {
    case 'integer':
    case 'number':
      return setting.deployDefault ?? setting.default;
    case 'enum':
    case 'duration':
      return setting.default;
    case 'list':
      return [];
    default:
      return setting.default ?? '';
  }
}

const text = z.string().trim();

function deploymentSchema(setting: Setting): z.ZodType {
  switch (setting.kind) {
    case 'integer':
    case 'number': {
      const base = setting.kind === 'integer' ? z.number().int() : z.number();
      const ranged = base.min(setting.deployMin ?? setting.min).max(setting.deployMax ?? setting.max);
      return setting.deployMultipleOf ? ranged.multipleOf(setting.deployMultipleOf) : ranged;
    }
    case 'enum':
      return z.enum(setting.values as [string, ...string[]]);
    case 'list':
      return z.array(text.min(1));
    // A deployment's URLs are https (the local stack's are not, hence the runtime's looser check).
    case 'url':
      return text.regex(/^(https:\/\/[^\s/]+(\/[^\s]*)?)?$/, 'an https URL');
    case 'text':
      return text;
    case 'duration': {
      const least = setting.deployMinMs ?? setting.minMs;
      return text.refine((value) => (parseIsoDuration(value) ?? -1) >= least, {
        message: `an ISO 8601 duration of days to seconds (e.g. ${setting.default}), at least ${formatDuration(least)}`,
      });
    }
  }
}

/** The channel's default provider: the module that declares itself so (its descriptor). */
function defaultProvider(channel: ProviderChannel): string {
  const binding = PROVIDER_BINDINGS.find((b) =>
    (b.descriptor.defaultFor as readonly string[] | undefined)?.includes(channel),
  );
  return binding?.descriptor.id ?? '';
}

/**
 * Deployment-only settings: they shape the infrastructure (where, how many, how long, alarms) and
 * never reach a function as a variable. Defaults here, meanings in {@link DEPLOYMENT_ONLY_MEANINGS}
 * (docs/deploy.md "Configure" and docs/configuration.md list both).
 */
export const DEPLOYMENT_ONLY_DEFAULTS = {
  account: '',
  region: '',
  stackPrefix: 'NoticeLedger',
  alarmEmail: '',
  emailMaxConcurrency: 5,
  smsMaxConcurrency: 2,
  emailBatchSize: 10,
  smsBatchSize: 5,
  logRetentionDays: 90,
  apiThrottleRateLimit: 50,
  apiThrottleBurstLimit: 100,
  providerCallbackRateLimit: 20,
  providerCallbackBurstLimit: 40,
  memorySize: 512,
  oldestUnresolvedAlarmSeconds: 3_600,
  queueAgeAlarmSeconds: 900,
  reservedConcurrency: {} as Partial<Record<FunctionName, number>>,
  memorySizes: { providerEvents: 256 } as Partial<Record<FunctionName, number>>,
  tableCapacity: TABLE_CAPACITY_DEFAULTS,
} as const;

export const DEPLOYMENT_ONLY_MEANINGS: Readonly<Record<keyof typeof DEPLOYMENT_ONLY_DEFAULTS, string>> = {
  account:
    "account to deploy to, set together with region; '' → the CDK CLI's (credentials and profile Region, " +
    'passed to the app as CDK_DEFAULT_ACCOUNT / CDK_DEFAULT_REGION)',
  region: 'Region to deploy to, set together with account',
  stackPrefix:
    'prefix of stack names and (kebab-case) of derived resource names (schedule group, configuration sets)',
  alarmEmail: "e-mail address subscribed to the alarm topic; '' → no subscription",
  emailMaxConcurrency:
    "SQS event-source maximum concurrency (2–1000) of each e-mail lane: the coarse provider cap; with a known rate the standard and bulk lanes' are derived from the rate, never above this",
  smsMaxConcurrency: 'the same for the SMS lanes',
  emailBatchSize:
    'records per e-mail sender invocation, processed in parallel (a batching provider gets EMAIL_BATCH_MAX instead)',
  smsBatchSize: 'records per SMS sender invocation, processed in parallel',
  logRetentionDays: 'CloudWatch Logs retention of every function and of the API access log',
  apiThrottleRateLimit: 'default stage throttle of the HTTP API (requests per second)',
  apiThrottleBurstLimit: 'default stage throttle of the HTTP API (burst)',
  providerCallbackRateLimit:
    "floor of each provider webhook route's throttle (`POST /v1/provider-events/<id>`); more where its reports " +
    "need it: 2 × requests per message × the channel's send rate, ≤ 10 000; behind the function URL these rates × 0.5 s " +
    "are the provider-events function's reserved concurrency (docs/architecture.md §8)",
  providerCallbackBurstLimit:
    "floor of each provider webhook route's burst; otherwise 2 × its rate (at most 5 000)",
  memorySize: 'memory of every function (MB) that `memorySizes` does not name',
  memorySizes:
    'memory per function (MB), e.g. `{ "reconciler": 1024 }` (keys as for reservedConcurrency), added to the ' +
    'defaults: providerEvents 256 (a delivery report is a signature check and two ledger requests, waiting on ' +
    'DynamoDB more than computing: half the memory, half the price per millisecond; docs/cost.md)',
  oldestUnresolvedAlarmSeconds: 'alarm when the oldest unresolved intent is older than this (seconds)',
  queueAgeAlarmSeconds: "alarm when a queue's oldest message is older than this (seconds)",
  reservedConcurrency:
    'reserved concurrency per function, e.g. `{ "reconciler": 1 }` (keys: http, sendEmail, sendSms, reconciler, ' +
    'providerEvents); unset by default: an account must keep 100 unreserved executions, so new accounts cannot reserve any; ' +
    'only providerEvents behind its function URL reserves by default (the webhooks’ bound, docs/architecture.md §8)',
  tableCapacity:
    'billing of the ledger table, its open index and the key table: `mode` `provisioned` (auto scaling of each ' +
    'table’s and index’s reads and writes between `min` and `max` capacity units per second, at ' +
    '`targetUtilizationPercent` 20–90) or `on-demand` (per request: for spiky or unknown load); give only the ' +
    'keys that differ, e.g. `{ "mode": "on-demand" }` or `{ "ledger": { "write": { "max": 10000 } } }`. ' +
    'Minimums are paid idle; above the maximums requests are throttled (docs/cost.md "Provisioned capacity with auto scaling", docs/deploy.md)',
};

/**
 * Every setting's default: the operator's runtime settings (under their deployment keys:
 * `providerTimeoutMs` is PROVIDER_TIMEOUT_MS), the deployment-only ones above, and each provider
 * binding's own (lib/providers/binding.ts).
 */
export const SETTING_DEFAULTS: Readonly<Record<string, unknown>> = {
  ...Object.fromEntries(
    OPERATOR_ENTRIES.map(({ name, setting, key }) => [key, deploymentDefault(name, setting)]),
  ),
  ...DEPLOYMENT_ONLY_DEFAULTS,
  ...Object.assign({}, ...PROVIDER_BINDINGS.map((b) => b.settings.defaults)),
};

export type SettingKey = string;

const VALID_LOG_RETENTION = new Set<number>(
  Object.values(RetentionDays).filter((v): v is number => typeof v === 'number' && v > 0),
);

const int = (min: number, max: number) => z.number().int().min(min).max(max);

/** Capacity units per second of one dimension: DynamoDB's per-table default quota is 40 000. */
const capacityRange = (d: CapacityRange) =>
  z
    .object({ min: int(1, 40_000).default(d.min), max: int(1, 40_000).default(d.max) })
    .strict()
    .refine((r) => r.min <= r.max, 'min must not exceed max')
    .default(d);
const readWriteRange = (d: ReadWriteRange) =>
  z
    .object({ read: capacityRange(d.read), write: capacityRange(d.write) })
    .strict()
    .default(d);
/** `tableCapacity`: each key optional, its default from lambdas/contract/table-capacity.ts. */
const tableCapacityShape = (d: TableCapacity) =>
  z
    .object({
      mode: z.enum(CAPACITY_MODES).default(d.mode),
      // Application Auto Scaling's bounds for a target-tracking DynamoDB policy.
      targetUtilizationPercent: int(20, 90).default(d.targetUtilizationPercent),
      ledger: readWriteRange(d.ledger),
      openIndex: readWriteRange(d.openIndex),
      keyTable: readWriteRange(d.keyTable),
    })
    .strict();

const DEPLOYMENT_ONLY_SHAPE = {
  account: text.regex(/^(\d{12})?$/, 'a 12-digit account id, or empty'),
  region: text.regex(/^([a-z]{2}(-[a-z]+)+-\d+)?$/, 'a Region code such as eu-west-1, or empty'),
  stackPrefix: text.regex(/^[A-Za-z][A-Za-z0-9]{0,39}$/, 'letters and digits, starting with a letter'),
  alarmEmail: text.regex(/^([^@\s]+@[^@\s]+\.[^@\s]+)?$/, 'an e-mail address, or empty'),
  emailMaxConcurrency: int(2, 1000),
  smsMaxConcurrency: int(2, 1000),
  emailBatchSize: int(1, 100),
  smsBatchSize: int(1, 100),
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
  // Given keys join the defaults: naming one function does not reset another's.
  memorySizes: z
    .partialRecord(z.enum(FUNCTION_NAMES), int(128, 10_240))
    .transform((sizes) => ({ ...DEPLOYMENT_ONLY_DEFAULTS.memorySizes, ...sizes })),
  tableCapacity: tableCapacityShape(TABLE_CAPACITY_DEFAULTS),
} satisfies Record<keyof typeof DEPLOYMENT_ONLY_DEFAULTS, z.ZodType>;

type DeploymentOnlySettings = z.infer<z.ZodObject<typeof DEPLOYMENT_ONLY_SHAPE>>;

/** The operator's runtime settings by deployment key, typed by the contract. */
type OperatorSettings = {
  readonly [N in OperatorSettingName as DeployKeyOf<N>]: (typeof OPERATOR_SETTINGS)[N] extends {
    kind: 'integer' | 'number';
  }
    ? number
    : (typeof OPERATOR_SETTINGS)[N] extends { kind: 'list' }
      ? string[]
      : string;
};

/** Operator, deployment-only and provider settings; any other key is an error. */
const SettingsSchema = z
  .object({
    ...Object.fromEntries(OPERATOR_ENTRIES.map(({ setting, key }) => [key, deploymentSchema(setting)])),
    ...DEPLOYMENT_ONLY_SHAPE,
    ...Object.assign({}, ...PROVIDER_BINDINGS.map((b) => b.settings.shape)),
  })
  .strict();

export interface ChannelSettings {
  readonly maxConcurrency: number;
  readonly batchSize: number;
  /** Provider rate (`<CHANNEL>_SEND_RATE_PER_SECOND`) the channel's senders share; undefined → no budget. */
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
    /**
     * Each channel's fallback provider (`emailFallbackProvider` / `smsFallbackProvider`), where
     * one is set: selected like the primary (secret, routes, rules, the sender's grants), never
     * merely retained (docs/architecture.md §"Provider failover").
     */
    readonly fallbacks: Readonly<Partial<Record<ProviderChannel, string>>>;
  };
  /** The parsed settings, for the provider bindings (lib/providers/binding.ts `bindingSettings`). */
  readonly settings: Readonly<Record<string, unknown>>;
  /**
   * The operator's numeric and enum runtime settings as every function reads them
   * (`PROVIDER_TIMEOUT_MS` …), each from its deployment key's value. The providers' choice and the
   * public URL the stack sets itself (retained providers normalised; the API's own URL by default).
   */
  readonly runtimeEnvironment: Readonly<Record<string, string>>;
  readonly alarmEmail: string | undefined;
  readonly publicBaseUrl: string | undefined;
  /**
   * The role map (`operatorPrincipals`, `auditorPrincipals`; docs/api.md "Callers"), each entry
   * an IAM principal ARN checked here; set on the http function, the one that reads it.
   */
  readonly callers: { readonly operators: readonly string[]; readonly auditors: readonly string[] };
  readonly channels: {
    readonly email: ChannelSettings;
    readonly sms: ChannelSettings;
  };
  /** The runtime settings the stack itself builds on (function timeouts, the schedule). */
  readonly runtime: {
    readonly providerTimeoutMs: number;
    readonly sendLeaseMs: number;
    readonly reconcileIntervalMs: number;
  };
  readonly openIndexShards: number;
  /** How the ledger table, its open index and the key table are billed and scaled (`tableCapacity`). */
  readonly tableCapacity: TableCapacity;
  /** The write-once audit archive (lib/constructs/archive-bucket.ts, archive-catalog.ts). */
  readonly archive: {
    /** Object Lock compliance retention (`archiveRetentionYears`, ARCHIVE_RETENTION_YEARS). */
    readonly retentionYears: number;
    /** The Athena workgroup the archive is queried in. */
    readonly workGroupName: string;
    /** What one archive query may scan (bytes) before Athena cancels it. */
    readonly bytesScannedCutoffPerQuery: number;
  };
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
  /** Memory per function where `memorySizes` names it; `memorySize` for the others. */
  readonly memorySizes: Readonly<Partial<Record<FunctionName, number>>>;
  /** Outcome events and their signed webhooks (lib/outcome-config.ts). */
  readonly outcomes: OutcomeConfig;
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
    return issue.keys
      .map((key) => retiredNamesMessage([key]) ?? `${key}: not a setting (docs/deploy.md lists them)`)
      .join('; ');
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
  const c = parsed.data as unknown as DeploymentOnlySettings &
    OperatorSettings &
    Readonly<Record<string, unknown>>;
  const resourcePrefix = kebab(c.stackPrefix);
  const runtimeEnvironment = Object.fromEntries(
    OPERATOR_ENTRIES.filter(
      ({ setting }) => setting.kind !== 'text' && setting.kind !== 'url' && setting.kind !== 'list',
    ).map(({ name, key }) => [name, String(c[key])]),
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
  // A token waited for inside the invocation comes before the claim and the provider call.
  const maxWaitMs = senderTimeoutSeconds * 1000 - timings.PROVIDER_TIMEOUT_MS - 5_000;
  if (c.rateBudgetMaxWaitMs > maxWaitMs) {
    throw new ConfigError(
      `invalid ${source}: rateBudgetMaxWaitMs (${c.rateBudgetMaxWaitMs}) must leave the provider call room in ` +
        `the sender timeout: at most ${maxWaitMs} (sender timeout − providerTimeoutMs − 5 s)`,
    );
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
  const providers = checkProviders(
    c.emailProvider,
    c.smsProvider,
    c.retainedProviders,
    { email: c.emailFallbackProvider || undefined, sms: c.smsFallbackProvider || undefined },
    source,
  );
  const callers = checkCallers(c.operatorPrincipals, c.auditorPrincipals, source);
  return {
    target: c.account ? { account: c.account, region: c.region } : undefined,
    stackPrefix: c.stackPrefix,
    resourcePrefix,
    providers,
    settings: c,
    runtimeEnvironment,
    outcomes: outcomeConfig(c, source),
    alarmEmail: c.alarmEmail || undefined,
    callers,
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
      reconcileIntervalMs: c.reconcileIntervalMs,
    },
    openIndexShards: c.openIndexShards,
    tableCapacity: c.tableCapacity,
    archive: {
      retentionYears: c.archiveRetentionYears,
      workGroupName: `${resourcePrefix}-archive`,
      // 100 GB (50 cents a query at $5/TB): a year of facts at a million notices a month is about
      // 12 GB gzip'd (some ten facts a notice, ~100 bytes each compressed); a mistyped query does
      // not read six years of them.
      bytesScannedCutoffPerQuery: 100 * 1024 ** 3,
    },
    logRetention: c.logRetentionDays as RetentionDays,
    api: {
      rateLimit: c.apiThrottleRateLimit,
      burstLimit: c.apiThrottleBurstLimit,
      callbackRateLimit: c.providerCallbackRateLimit,
      callbackBurstLimit: c.providerCallbackBurstLimit,
    },
    memorySize: c.memorySize,
    memorySizes: c.memorySizes,
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
  return message.replace(/\b[A-Z][A-Z0-9_]+\b/g, (name) =>
    name in OPERATOR_SETTINGS ? deployKeyOf(name) : name,
  );
}

/** Every role map entry must name an IAM principal (lambdas/contract/principals.ts), as the function will. */
function checkCallers(
  operators: readonly string[],
  auditors: readonly string[],
  source: string,
): NoticeLedgerConfig['callers'] {
  const problems = [
    ...invalidPrincipalEntries(operators).map((entry) => `operatorPrincipals: ${entry}`),
    ...invalidPrincipalEntries(auditors).map((entry) => `auditorPrincipals: ${entry}`),
  ];
  if (problems.length > 0) {
    throw new ConfigError(
      `invalid ${source}: not an IAM role, user or account ARN (a trailing * matches names by prefix): ${problems.join('; ')}`,
    );
  }
  return { operators, auditors };
}

/**
 * The channels' providers must be registered (lib/providers/registry.ts) and serve their channel,
 * or be `none` (one channel at most); retained ones must be registered. Messages name the setting and the ids there are.
 */
function checkProviders(
  email: string,
  sms: string,
  retained: readonly string[],
  fallbacks: Readonly<Record<ProviderChannel, string | undefined>>,
  source: string,
): NoticeLedgerConfig['providers'] {
  const ids = PROVIDER_BINDINGS.map((b) => b.descriptor.id);
  const check = (key: string, id: string, channel?: ProviderChannel) => {
    // A channel may be left unconfigured: no secret, no sender, no event source (intake refuses it).
    if (channel && id === NO_PROVIDER) return;
    const binding = PROVIDER_BINDINGS.find((b) => b.descriptor.id === id);
    if (!binding) throw new ConfigError(`invalid ${source}: ${key}: no provider "${id}" (${ids.join(', ')})`);
    if (channel && !(binding.descriptor.channels as readonly string[]).includes(channel)) {
      throw new ConfigError(`invalid ${source}: ${key}: provider "${id}" does not send ${channel}`);
    }
  };
  check('emailProvider', email, 'email');
  check('smsProvider', sms, 'sms');
  if (email === NO_PROVIDER && sms === NO_PROVIDER) {
    throw new ConfigError(
      `invalid ${source}: emailProvider and smsProvider are both ${NO_PROVIDER}: nothing could be sent`,
    );
  }
  for (const id of retained) check('retainedProviders', id);
  const primaries = { email, sms };
  for (const channel of ['email', 'sms'] as const) {
    const fallback = fallbacks[channel];
    if (fallback === undefined) continue;
    const key = `${channel}FallbackProvider`;
    if (primaries[channel] === NO_PROVIDER) {
      throw new ConfigError(
        `invalid ${source}: ${key}: ${channel}Provider is ${NO_PROVIDER}, nothing to fail over from`,
      );
    }
    check(key, fallback, channel);
    if (fallback === primaries[channel]) {
      throw new ConfigError(
        `invalid ${source}: ${key}: "${fallback}" is already ${channel}Provider; a fallback must be another provider`,
      );
    }
  }
  const chosen = new Set([email, sms, ...Object.values(fallbacks)]);
  return {
    email,
    sms,
    retained: [...new Set(retained)].filter((id) => !chosen.has(id)),
    fallbacks: Object.fromEntries(
      (['email', 'sms'] as const).flatMap((channel) => {
        const fallback = fallbacks[channel];
        return fallback === undefined ? [] : [[channel, fallback]];
      }),
    ),
  };
}
