/**
 * The runtime settings every process reads from its environment, written once: name, kind,
 * default, range and meaning. Plain data (no zod, no imports outside lambdas/contract): the
 * runtime derives its parser from it (lambdas/edge/config.ts), the CDK derives its deployment
 * settings and the functions' environment from it (lib/config.ts), the local stack reads the same
 * names (local/stack.ts), and docs/configuration.md is generated from it (bin/configuration-doc.ts).
 * docs/architecture.md §"Configuration" explains the split.
 *
 * Two groups, one vocabulary:
 * - {@link OPERATOR_SETTINGS}: what the operator of a deployment chooses. Each is a deployment
 *   setting (deploy/settings.json) under its variable's name in camelCase, derived by
 *   {@link deployKeyOf} and never written down twice: `EMAIL_BATCH_MAX` is `emailBatchMax`, in the
 *   same unit.
 * - {@link WIRING_SETTINGS}: what the stack wires (queues, the table, keys, roles, the bus). The
 *   CDK sets them from the resources it creates and the local stack from the services it starts;
 *   they are never deployment settings.
 *
 * Provider settings (the sender address, API credentials …) are not here: each provider module declares
 * its own in its descriptor (lambdas/providers/<id>/descriptor.ts), under the same naming rule.
 */

import { ARCHIVE_SETTINGS, ARCHIVE_WIRING_SETTINGS } from './archive-settings.ts';
import { FAILOVER_SETTINGS } from './failover-settings.ts';
import { INDEX_WATCH_SETTINGS, INDEX_WATCH_WIRING_SETTINGS } from './index-watch-settings.ts';
import { OUTCOME_SETTINGS, OUTCOME_WIRING_SETTINGS } from './outcome-settings.ts';
import { CALLER_SETTINGS, CALLER_WIRING_SETTINGS } from './principals.ts';
import { SEND_WINDOW_SETTINGS } from './send-windows.ts';

export type SettingKind = 'integer' | 'number' | 'enum' | 'text' | 'url' | 'list' | 'duration';

interface SettingBase {
  readonly kind: SettingKind;
  readonly description: string;
}

export interface NumberSetting extends SettingBase {
  readonly kind: 'integer' | 'number';
  readonly default?: number;
  /** What the code can work with (tests run with second-scale timings). */
  readonly min: number;
  readonly max: number;
  /** Stricter bounds a deployment must respect (production sanity); absent: `min`/`max`. */
  readonly deployMin?: number;
  readonly deployMax?: number;
  /** A deployment's value must be a multiple of this (a schedule runs in whole minutes). */
  readonly deployMultipleOf?: number;
  /** A deployment's default where it differs from a process's (absent: `default`). */
  readonly deployDefault?: number;
}

export interface EnumSetting extends SettingBase {
  readonly kind: 'enum';
  readonly values: readonly string[];
  readonly default: string;
}

export interface TextSetting extends SettingBase {
  readonly kind: 'text' | 'url' | 'list';
  readonly default?: string;
}

/**
 * An ISO 8601 duration of days to seconds (`P35D`, `PT10S`; lambdas/contract/duration.ts): what
 * a person writes for a span of time; a process reads it as milliseconds.
 */
export interface DurationSetting extends SettingBase {
  readonly kind: 'duration';
  readonly default: string;
  readonly minMs: number;
  /** A deployment's lower bound, where stricter than `minMs`. */
  readonly deployMinMs?: number;
}

export type Setting = NumberSetting | EnumSetting | TextSetting | DurationSetting;

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * What the operator of a deployment chooses: providers, rates, deadlines, timeouts, policies.
 * Deployment setting: {@link deployKeyOf} the name, same unit, same range (or the stricter
 * `deployMin`/`deployMax`).
 */
export const OPERATOR_SETTINGS = {
  EMAIL_PROVIDER: {
    kind: 'text',
    description:
      "provider module of the email channel (an id of lambdas/providers/registry.ts); unset: the module that declares itself the channel's default; `none`: the channel is not configured (no secret, no simulator, no consumer; intake refuses it with 422 channel_not_configured)",
  },
  SMS_PROVIDER: {
    kind: 'text',
    description:
      "provider module of the sms channel (an id of lambdas/providers/registry.ts); unset: the module that declares itself the channel's default; `none`: the channel is not configured (no secret, no simulator, no consumer; intake refuses it with 422 channel_not_configured)",
  },
  // Provider failover per channel (./failover-settings.ts).
  ...FAILOVER_SETTINGS,
  RETAINED_PROVIDERS: {
    kind: 'list',
    description:
      'comma-separated ids of providers no longer selected whose lookups and inbound events stay active ' +
      'while rows sent through them are open',
  },
  // Who calls the API: the role map (./principals.ts, docs/api.md "Callers").
  ...CALLER_SETTINGS,
  PUBLIC_BASE_URL: {
    kind: 'url',
    description:
      'the origin providers call back (webhook URLs, signature checks); unset: AWS: the provider-events function’s URL, ' +
      'else (no function URLs) the API’s; set: an API domain, webhooks at API routes (docs/deploy.md); local: http://127.0.0.1:$PORT',
  },
  PROVIDER_TIMEOUT_MS: {
    kind: 'integer',
    default: 10 * SECOND,
    min: 1,
    max: 10 * MINUTE,
    deployMin: SECOND,
    deployMax: MINUTE,
    description:
      'provider call timeout; expiry = ambiguous outcome (unknown); AWS: sender timeout = 2 × this + 10 s',
  },
  SEND_LEASE_MS: {
    kind: 'integer',
    default: MINUTE,
    min: 1,
    max: DAY,
    deployMin: 10 * SECOND,
    deployMax: HOUR,
    description:
      'claim lease; an expired sending row becomes unknown; a reserved row unclaimed this long, or a ' +
      'retry_scheduled row this long past due, is re-enqueued; AWS: must exceed the sender timeout',
  },
  RECONCILE_INTERVAL_MS: {
    kind: 'integer',
    default: MINUTE,
    min: 1,
    max: HOUR,
    deployMin: MINUTE,
    deployMax: HOUR,
    deployMultipleOf: MINUTE,
    description:
      'reconciler period (and re-check period of unknown rows); AWS: whole minutes (a Scheduler rate)',
  },
  UNKNOWN_GRACE_MS: {
    kind: 'integer',
    default: 10 * MINUTE,
    min: 1,
    max: 30 * DAY,
    deployMin: MINUTE,
    deployMax: 7 * DAY,
    description: 'how long unknown may wait for a provider answer before policy decides',
  },
  UNKNOWN_POLICY: {
    kind: 'enum',
    values: ['escalate', 'fail', 'resend'],
    default: 'escalate',
    description:
      'after the grace period without an answer: escalate (an escalation event; the row stays unknown, ' +
      'unresolved, until an operator resolves it or its deadline passes, then failed unknown_unresolved), ' +
      'fail (failed unknown_unresolved + escalation at once) or resend (deliberate retry, reason recorded)',
  },
  RETRY_BASE_MS: {
    kind: 'integer',
    default: SECOND,
    min: 1,
    max: DAY,
    deployMin: 100,
    deployMax: HOUR,
    description: 'backoff base (capped exponential with full jitter)',
  },
  RETRY_CAP_MS: {
    kind: 'integer',
    default: 15 * MINUTE,
    min: 1,
    max: 30 * DAY,
    deployMin: SECOND,
    deployMax: DAY,
    description: 'backoff cap',
  },
  MAX_ATTEMPTS: {
    kind: 'integer',
    default: 8,
    min: 1,
    max: 100,
    description: 'provider attempts per (notice, channel), all counted',
  },
  NOTICE_DEFAULT_DEADLINE_MS: {
    kind: 'integer',
    default: DAY,
    min: 1,
    max: 30 * DAY,
    deployMin: MINUTE,
    description: 'deadline when a notice gives none',
  },
  OPEN_INDEX_SHARDS: {
    kind: 'integer',
    default: 4,
    min: 1,
    max: 64,
    description: 'partitions of the open-intent index (do not change on a live table)',
  },
  // The hot window and the archive (issue 22, ./archive-settings.ts).
  ...ARCHIVE_SETTINGS,
  // Watched rows (./index-watch-settings.ts, docs/table-design.md).
  ...INDEX_WATCH_SETTINGS,
  // Delivery follow-up and operator holds (issue 13).
  DELIVERY_REPORT_GRACE_MS: {
    kind: 'integer',
    default: 15 * MINUTE,
    min: 1,
    max: DAY,
    deployMin: MINUTE,
    deployMax: DAY,
    description:
      'how long an accepted row may wait for its final delivery report before the reconciler asks the ' +
      "provider's status API (where it has one), then again on a doubling back-off",
  },
  DELIVERY_REPORT_DEADLINE_MS: {
    kind: 'integer',
    default: 72 * HOUR,
    min: 1,
    max: 30 * DAY,
    deployMin: HOUR,
    deployMax: 30 * DAY,
    description:
      'how long after acceptance a final delivery report is waited for; then a delivery_unconfirmed fact ' +
      'is recorded (not a failure) and the row is no longer followed up',
  },
  STATUS_PULLS_PER_RUN: {
    kind: 'integer',
    default: 200,
    min: 0,
    max: 10_000,
    deployMin: 1,
    description:
      'provider status questions per reconciler run (delivery follow-up and pulled events); a larger ' +
      'backlog is spread over the next runs, oldest first',
  },
  OPERATOR_HOLD_MS: {
    kind: 'integer',
    default: 15 * MINUTE,
    min: 1,
    max: DAY,
    deployMin: MINUTE,
    deployMax: DAY,
    description:
      'how long a channel is held after the provider answers that our account needs a person (spend ' +
      'limit, credit, key); the attempt is not counted and the row is escalated',
  },
  // --- provider batch sends (issue 12) ----------------------------------------------------------
  EMAIL_BATCH_MAX: {
    kind: 'integer',
    default: 100,
    min: 1,
    max: 1000,
    description:
      'most emails in one provider batch call where the email provider has one (capped by its own limit); ' +
      '1 turns batching off',
  },
  // --- The channel's rate: the shared rate budget (issue 15, docs/architecture.md §11) ---------
  EMAIL_SEND_RATE_PER_SECOND: {
    kind: 'number',
    default: 0,
    min: 0,
    max: 100_000,
    description:
      "the email provider's rate (calls/s: the account's send rate or the API's request limit), shared by every " +
      "sender instance through the ledger table's budget item, so it holds at any concurrency; also the " +
      'rate of the deadline-risk estimates and of the lower lanes’ caps; 0: no budget (only the throttle gate)',
  },
  SMS_SEND_RATE_PER_SECOND: {
    kind: 'number',
    default: 0,
    min: 0,
    max: 100_000,
    description:
      "the sms provider's rate (messages/s: the sender number's or account's limit), shared by " +
      "every sender instance through the ledger table's budget item, so it holds at any concurrency; " +
      'also the rate of the deadline-risk estimates and of the lower lanes’ caps; 0: no budget (only the throttle gate)',
  },
  RATE_BUDGET_LEAD_MS: {
    kind: 'integer',
    default: 500,
    min: 0,
    max: 10 * SECOND,
    description:
      'how far ahead of the tokens lower lanes have booked the critical lane may take its own (standard: ' +
      'half); at most rate × lead tokens above the rate while a higher lane saturates',
  },
  RATE_BUDGET_MAX_WAIT_MS: {
    kind: 'integer',
    default: 10 * SECOND,
    min: 0,
    max: 10 * MINUTE,
    // Below the lower lanes' booking horizon (0.8 s, lambdas/contract/lanes.ts) their own calls in
    // flight are booked beyond it and defer over and over: at 250 ms, 1–2 deferred rows per
    // accepted e-mail and +27–47 % sender CPU (docs/benchmarks.md). Shorter only for benchmarks.
    deployMin: SECOND,
    description:
      'longest wait for a booked token inside a sender invocation; a lane booked further ahead defers ' +
      'its references through the queue; AWS: at least 1 s (below the lanes’ 0.8 s horizon calls defer ' +
      'over and over), at most the sender timeout − PROVIDER_TIMEOUT_MS − 5 s',
  },
  // Send windows per channel and their default zone (./send-windows.ts, docs/architecture.md §12).
  ...SEND_WINDOW_SETTINGS,
  // Outcome events and their signed webhooks (issue 23).
  ...OUTCOME_SETTINGS,
} as const satisfies Readonly<Record<string, Setting>>;

/**
 * What the stack wires: names and ARNs of the resources it creates (AWS: lib/constructs/, set on
 * the functions that are granted them) or the services it starts (local/stack.ts). Never a
 * deployment setting.
 */
export const WIRING_SETTINGS = {
  LEDGER_TABLE_NAME: {
    kind: 'text',
    default: 'notice-ledger',
    description: 'the ledger table (created when missing by the local stack)',
  },
  EMAIL_QUEUE_URL: { kind: 'text', description: 'the email channel queue (its standard lane)' },
  SMS_QUEUE_URL: { kind: 'text', description: 'the sms channel queue (its standard lane)' },
  EMAIL_QUEUE_ARN: { kind: 'text', description: 'the email channel queue, as a Scheduler target' },
  SMS_QUEUE_ARN: { kind: 'text', description: 'the sms channel queue, as a Scheduler target' },
  EMAIL_CRITICAL_QUEUE_URL: {
    kind: 'text',
    description: "the email channel's critical lane queue; unset: the channel queue",
  },
  EMAIL_BULK_QUEUE_URL: {
    kind: 'text',
    description: "the email channel's bulk lane queue; unset: the channel queue",
  },
  SMS_CRITICAL_QUEUE_URL: {
    kind: 'text',
    description: "the sms channel's critical lane queue; unset: the channel queue",
  },
  SMS_BULK_QUEUE_URL: {
    kind: 'text',
    description: "the sms channel's bulk lane queue; unset: the channel queue",
  },
  EMAIL_CRITICAL_QUEUE_ARN: {
    kind: 'text',
    description: 'the email critical lane queue, as a Scheduler target',
  },
  EMAIL_BULK_QUEUE_ARN: { kind: 'text', description: 'the email bulk lane queue, as a Scheduler target' },
  SMS_CRITICAL_QUEUE_ARN: { kind: 'text', description: 'the sms critical lane queue, as a Scheduler target' },
  SMS_BULK_QUEUE_ARN: { kind: 'text', description: 'the sms bulk lane queue, as a Scheduler target' },
  ...INDEX_WATCH_WIRING_SETTINGS,
  FINGERPRINT_KEY: {
    kind: 'text',
    description:
      'base64 of 32 bytes: HMAC key of destination fingerprints (local stack: generated once into its data dir)',
  },
  FINGERPRINT_KEY_SECRET_ARN: {
    kind: 'text',
    description: 'AWS: Secrets Manager secret { "key": "<base64 of 32 bytes>" } (wins over FINGERPRINT_KEY)',
  },
  ENVELOPE_LOCAL_KEY: {
    kind: 'text',
    description:
      'base64 of 32 bytes: AES-256-GCM key of send envelopes (local stack: generated once into its data dir)',
  },
  ENVELOPE_KMS_KEY_ID: {
    kind: 'text',
    description: 'AWS: KMS key that wraps the envelope data keys (wins over ENVELOPE_LOCAL_KEY)',
  },
  SCHEDULE_GROUP_NAME: {
    kind: 'text',
    default: 'notice-ledger-retries',
    description: 'EventBridge Scheduler group of retry schedules',
  },
  SCHEDULER_ROLE_ARN: { kind: 'text', description: 'role EventBridge Scheduler assumes to enqueue' },
  ...CALLER_WIRING_SETTINGS,
  ...OUTCOME_WIRING_SETTINGS,
  ...ARCHIVE_WIRING_SETTINGS,
  ESCALATION_EVENT_BUS: {
    kind: 'text',
    description: 'EventBridge bus for escalations; unset: escalations are log lines',
  },
} as const satisfies Readonly<Record<string, Setting>>;

/** Every runtime setting, both groups: what lambdas/edge/config.ts parses. */
export const SETTINGS = { ...OPERATOR_SETTINGS, ...WIRING_SETTINGS } as const satisfies Readonly<
  Record<string, Setting>
>;

export type OperatorSettingName = keyof typeof OPERATOR_SETTINGS;
export type WiringSettingName = keyof typeof WIRING_SETTINGS;
export type SettingName = keyof typeof SETTINGS;

export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];
export const OPERATOR_SETTING_NAMES = Object.keys(OPERATOR_SETTINGS) as OperatorSettingName[];

/** `EMAIL_BATCH_MAX` → `emailBatchMax`: a variable's deployment key, as a type. */
export type DeployKeyOf<Name extends string> = Name extends `${infer Head}_${infer Tail}`
  ? `${Lowercase<Head>}${Capitalize<DeployKeyOf<Tail>>}`
  : Lowercase<Name>;

/**
 * A variable's deployment key: its name in camelCase (`EMAIL_BATCH_MAX` → `emailBatchMax`,
 * `<ID>_FROM` → `<id>From` for a provider's). The one rule that ties deploy/settings.json to the
 * environment, for the core settings and the providers' alike.
 */
export function deployKeyOf<Name extends string>(name: Name): DeployKeyOf<Name> {
  return name.toLowerCase().replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()) as DeployKeyOf<Name>;
}

/**
 * Bundle-time switches, not run-time settings: lib/constructs/bundling.ts defines
 * `process.env.NOTICE_LEDGER_OMIT_<WHAT>` when it bundles a function, so that esbuild leaves out
 * the provider modules (`<ID>`), facets (`TRANSPORT`, `LOOKUP`, `STATUS`, `INBOUND`) and the
 * secrets adapter (`SECRETS`) the function does not carry (lambdas/providers/registry.ts).
 * Unset everywhere else: locally and in tests every module loads.
 */
export const BUNDLE_SWITCH_PREFIX = 'NOTICE_LEDGER_OMIT_';

/** `EMAIL_PROVIDER` / `SMS_PROVIDER` (`emailProvider` / `smsProvider`): the channel is unconfigured. */
export const NO_PROVIDER = 'none';

/** The per-channel variables, named once. */
export const CHANNEL_SETTINGS = {
  email: {
    provider: 'EMAIL_PROVIDER',
    queueUrl: 'EMAIL_QUEUE_URL',
    queueArn: 'EMAIL_QUEUE_ARN',
    sendRate: 'EMAIL_SEND_RATE_PER_SECOND',
  },
  sms: {
    provider: 'SMS_PROVIDER',
    queueUrl: 'SMS_QUEUE_URL',
    queueArn: 'SMS_QUEUE_ARN',
    sendRate: 'SMS_SEND_RATE_PER_SECOND',
  },
} as const satisfies Readonly<
  Record<'email' | 'sms', Readonly<Record<'provider' | 'queueUrl' | 'queueArn' | 'sendRate', SettingName>>>
>;

/** The per-channel variables of the lanes with a queue of their own (issue 15), named once. */
export const LANE_SETTINGS = {
  email: {
    queueUrls: { critical: 'EMAIL_CRITICAL_QUEUE_URL', bulk: 'EMAIL_BULK_QUEUE_URL' },
    queueArns: { critical: 'EMAIL_CRITICAL_QUEUE_ARN', bulk: 'EMAIL_BULK_QUEUE_ARN' },
  },
  sms: {
    queueUrls: { critical: 'SMS_CRITICAL_QUEUE_URL', bulk: 'SMS_BULK_QUEUE_URL' },
    queueArns: { critical: 'SMS_CRITICAL_QUEUE_ARN', bulk: 'SMS_BULK_QUEUE_ARN' },
  },
} as const satisfies Readonly<
  Record<
    'email' | 'sms',
    {
      /** The lanes with a queue of their own; `standard` is the channel queue. */
      readonly queueUrls: Readonly<Record<'critical' | 'bulk', WiringSettingName>>;
      readonly queueArns: Readonly<Record<'critical' | 'bulk', WiringSettingName>>;
    }
  >
>;

/** The numeric settings an invariant is written over. */
export type Timings = Readonly<
  Record<'PROVIDER_TIMEOUT_MS' | 'SEND_LEASE_MS' | 'RETRY_BASE_MS' | 'RETRY_CAP_MS', number>
>;

export interface Invariant {
  /** The settings it relates; the first is the one to change. */
  readonly names: readonly SettingName[];
  readonly holds: (values: Timings) => boolean;
  readonly message: (values: Timings) => string;
}

/**
 * Rules between settings that every process checks at start. The lease must outlast the
 * provider timeout: a worker still waiting on the provider must never see its row turned into
 * `unknown` (and resent after a lookup) under it. The CDK adds the stricter rule that the lease
 * outlasts the whole sender invocation (lib/config.ts, `senderTimeoutMs`).
 */
export const INVARIANTS: readonly Invariant[] = [
  {
    names: ['SEND_LEASE_MS', 'PROVIDER_TIMEOUT_MS'],
    holds: (v) => v.SEND_LEASE_MS > v.PROVIDER_TIMEOUT_MS,
    message: (v) =>
      `SEND_LEASE_MS (${v.SEND_LEASE_MS}) must exceed PROVIDER_TIMEOUT_MS (${v.PROVIDER_TIMEOUT_MS}): ` +
      'a worker waiting on the provider must not lose its lease',
  },
  {
    names: ['RETRY_CAP_MS', 'RETRY_BASE_MS'],
    holds: (v) => v.RETRY_CAP_MS >= v.RETRY_BASE_MS,
    message: (v) => `RETRY_CAP_MS (${v.RETRY_CAP_MS}) must be at least RETRY_BASE_MS (${v.RETRY_BASE_MS})`,
  },
];

/**
 * How long one sender invocation may run: two provider timeouts (a batch's records run in
 * parallel, so one call bounds the batch, and a throttle wait may precede it) plus ten seconds
 * for the ledger writes around it and a cold start. The lease must outlast it (lib/config.ts).
 */
export function senderTimeoutMs(providerTimeoutMs: number): number {
  return (2 * Math.ceil(providerTimeoutMs / 1000) + 10) * 1000;
}
