/**
 * The local stack's own variables, written once: what only `npm start` (local/stack.ts) reads,
 * beside the runtime's settings (lambdas/contract/settings.ts) and the providers' (their
 * descriptors), which it reads under the same names as AWS. docs/configuration.md is generated
 * from this too (bin/configuration-doc.ts); test/architecture/settings-coverage.test.ts checks that
 * local/ reads no variable declared nowhere.
 */

export interface LocalSetting {
  /** Absent: unset means "not given" (the description says what happens then). */
  readonly default?: string;
  readonly description: string;
}

export const LOCAL_SETTINGS = {
  PORT: { default: '3000', description: 'HTTP API port on 127.0.0.1; 0: any free port' },
  LEDGER_DATA_DIR: {
    default: '.local/data',
    description:
      'where DynamoDB Local, the generated keys (local-secrets.json) and the schedules are kept; a restart resumes from it',
  },
  TABLE_CAPACITY_MODE: {
    default: 'provisioned',
    description:
      "how the ledger and key tables are created, as the deployment's `tableCapacity.mode` bills them: `provisioned` " +
      '(at its default minimums) or `on-demand`; DynamoDB Local accepts provisioned throughput but never throttles; ' +
      'a table that exists keeps its mode',
  },
  LOCAL_SQS_CONCURRENCY: {
    default: '2',
    description:
      "batches in flight per queue; with a channel's rate, the standard and bulk lanes' derived from it, as in AWS",
  },
  LOCAL_LANES: {
    default: 'on',
    description: 'off: no critical and bulk queues, every priority rides on the channel queue (one lane)',
  },
  LOCAL_SENDERS: {
    default: 'email,sms',
    description:
      'channels whose senders consume their queues (`email,sms`, `sms`, `none`): e.g. fill the queues first, send later',
  },
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: {
    default: 'true',
    description:
      "the AWS SDK's own switch for its warning that its 2027 releases need Node 22, printed once per start on " +
      'Node 20; `npm start` and the CLI turn it off unless set (deployed functions run Node 24 and never print it)',
  },
  LOCAL_SES_EVENTS: {
    description:
      "`store`: also feed SES events when AWS_ENDPOINT_URL_SESV2 is external, read from that endpoint's `/store` " +
      '(an aws-ses-v2-local, or a proxy in front of one, e.g. local/fault-proxy.ts); unset: events only for the ' +
      'emulator the stack started',
  },
  CRASH_POINT: {
    description:
      'fault injection: `before_send`, `after_accept` or `before_commit`; the process SIGKILLs itself there (local/crash-points.ts)',
  },
  CRASH_POINT_NOTICE: { description: 'with CRASH_POINT: only for this noticeId' },
  CRASH_POINT_CHANNEL: { description: 'with CRASH_POINT: only for this channel (`email`, `sms`)' },
  AWS_REGION: {
    default: 'us-east-1',
    description: 'the SDK needs a Region even for local endpoints; nothing reaches AWS',
  },
  AWS_ACCESS_KEY_ID: { default: 'local', description: 'the SDK needs credentials even for local endpoints' },
  AWS_SECRET_ACCESS_KEY: {
    default: 'local',
    description: 'the SDK needs credentials even for local endpoints',
  },
  AWS_ENDPOINT_URL_DYNAMODB: {
    description:
      'use this DynamoDB instead of starting DynamoDB Local; the table is created if missing, so two stacks can share one',
  },
  AWS_ENDPOINT_URL_SQS: {
    description: 'use this SQS instead of starting local-aws-sqs; the queues are created if missing',
  },
  AWS_ENDPOINT_URL_SESV2: {
    description: '(`EMAIL_PROVIDER=ses`) use this SES instead of starting aws-ses-v2-local',
  },
  AWS_ENDPOINT_URL_SCHEDULER: {
    description: 'use this EventBridge Scheduler instead of starting the stand-in (local/scheduler/)',
  },
  AWS_ENDPOINT_URL_EVENTBRIDGE: {
    description:
      'put outcome events on this EventBridge instead of the stand-in (local/event-bus/; `/console/events.json` and `notice-ledger events` then list none)',
  },
  AWS_ENDPOINT_URL_PINPOINT_SMS_VOICE_V2: {
    description:
      '(`SMS_PROVIDER=eum`) use this End User Messaging SMS endpoint instead of starting the simulator (local/eum-simulator/) and its event feed',
  },
  AWS_SES_ACCOUNT: {
    description:
      "aws-ses-v2-local's account (JSON, read on every request); unset: a new production account's quota (local/ses/server.ts)",
  },
} as const satisfies Readonly<Record<string, LocalSetting>>;

export type LocalSettingName = keyof typeof LOCAL_SETTINGS;

/**
 * `LOCAL_<ID>_PORT`: a fixed port for a simulator (`<ID>` a provider id: `LOCAL_TWILIO_PORT`),
 * the Scheduler stand-in (`LOCAL_SCHEDULER_PORT`) or the S3 store (`LOCAL_S3_PORT`). 0 or unset:
 * any free port.
 */
export const SERVICE_PORT = {
  pattern: 'LOCAL_<ID>_PORT',
  description:
    'a fixed port for a simulator, the Scheduler stand-in or the S3 store (`LOCAL_S3_PORT`); 0 or unset: any free port',
  variable: (id: string): string => `LOCAL_${id.toUpperCase()}_PORT`,
} as const;

/** The port `LOCAL_<ID>_PORT` fixes for the service `id` (0: any free port). */
export function servicePort(env: Readonly<Record<string, string | undefined>>, id: string): number {
  const name = SERVICE_PORT.variable(id);
  const value = env[name];
  if (value === undefined || value === '') return 0;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new Error(`${name} must be 0–65535, got "${value}"`);
  return port;
}

/** A local setting's default, for the code that applies it. */
export function localDefault(name: LocalSettingName): string {
  const setting: LocalSetting = LOCAL_SETTINGS[name];
  if (setting.default === undefined) throw new Error(`${name} has no default`);
  return setting.default;
}
