import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Annotations, Match, type Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ESCALATION_DETAIL_TYPE as RUNTIME_ESCALATION_DETAIL_TYPE,
  ESCALATION_SOURCE as RUNTIME_ESCALATION_SOURCE,
} from '../../lambdas/adapters/eventbridge/escalation-publishers.ts';
import { FUNCTION_NAMES } from '../../lambdas/contract/functions.ts';
import { LANE_BOOKING_HORIZON_MS } from '../../lambdas/contract/lanes.ts';
import { DEFERRAL_CAUSES, deferralMetric, Metric } from '../../lambdas/contract/metrics.ts';
import { UNRESOLVED_STATES as DOMAIN_UNRESOLVED_STATES } from '../../lambdas/domain/state-machine.ts';
import { ConfigSchema, readConfig as readRuntimeConfig } from '../../lambdas/edge/config.ts';
import { PROVIDERS } from '../../lambdas/providers/registry.ts';
import { ESCALATION_DETAIL_TYPE, ESCALATION_SOURCE } from '../../lib/constructs/escalations.ts';
import { UNRESOLVED_STATES } from '../../lib/constructs/monitoring.ts';
import { ENVELOPE_ENCRYPTION_CONTEXT, type NoticeFunction } from '../../lib/constructs/notice-function.ts';
import {
  grantsOf,
  identityStatements,
  logicalId,
  ROOT,
  roleStatements,
  type Synthesized,
  synthesize,
  synthesizeIn,
} from './synth.ts';

let synth: Synthesized;
let template: Template;
let synthMs = 0;

type FunctionKey = keyof Synthesized['delivery']['functions'];
const FUNCTIONS: readonly FunctionKey[] = FUNCTION_NAMES;

beforeAll(() => {
  const started = performance.now();
  // Bundles the five handlers with the local esbuild, as `cdk synth` does.
  synth = synthesize();
  template = synth.deliveryTemplate;
  synthMs = performance.now() - started;
});

const fn = (key: FunctionKey): NoticeFunction => synth.delivery.functions[key];

interface FunctionProperties {
  readonly Runtime?: string;
  readonly Architectures?: string[];
  readonly Handler?: string;
  readonly Timeout?: number;
  readonly MemorySize?: number;
  readonly LoggingConfig?: { readonly LogGroup?: unknown };
  readonly DeadLetterConfig?: unknown;
  readonly Environment?: { readonly Variables?: Record<string, unknown> };
}

function functionProps(key: FunctionKey): FunctionProperties | undefined {
  return template.findResources('AWS::Lambda::Function')[logicalId(fn(key).function)]?.Properties;
}

function environmentOf(key: FunctionKey): Record<string, unknown> {
  return functionProps(key)?.Environment?.Variables ?? {};
}

function grants(key: FunctionKey): Map<string, string[]> {
  return grantsOf(roleStatements(template, logicalId(fn(key).role)));
}

describe('delivery stack: functions', () => {
  it('synthesizes with bundling in reasonable time', () => {
    // Informational: printed so the report can quote it; generous bound against pathologies.
    console.info(`delivery app synth incl. bundling of 5 functions: ${Math.round(synthMs)} ms`);
    expect(synthMs).toBeLessThan(120_000);
  });

  it('runs every function on Node.js 24, ARM64, ESM bundles with source maps', () => {
    for (const key of FUNCTIONS) {
      const props = functionProps(key);
      expect(props?.Runtime, key).toMatch(/^nodejs2[24]\.x$/);
      expect(props?.Architectures, key).toEqual(['arm64']);
      expect(props?.Handler, key).toBe('index.handler');
      expect(environmentOf(key).NODE_OPTIONS, key).toBe('--enable-source-maps');
      expect(props?.LoggingConfig?.LogGroup, key).toEqual({ Ref: logicalId(fn(key).logGroup) });
    }
  });

  it('gives each function `memorySize` (512 MB), the provider-events function its `memorySizes` default (256 MB)', () => {
    for (const key of FUNCTIONS) {
      expect(functionProps(key)?.MemorySize, key).toBe(key === 'providerEvents' ? 256 : 512);
    }
  });

  it('memorySizes: a function named joins the defaults; the provider-events one keeps its 256 MB unless named', () => {
    const sized = synthesize({
      bundle: false,
      settings: { memorySize: 1024, memorySizes: { reconciler: 2048 } },
    });
    const memory = (key: FunctionKey) =>
      sized.deliveryTemplate.findResources('AWS::Lambda::Function')[
        logicalId(sized.delivery.functions[key].function)
      ]?.Properties?.MemorySize;
    expect(memory('reconciler')).toBe(2048);
    expect(memory('providerEvents')).toBe(256);
    expect(memory('http')).toBe(1024);
    const named = synthesize({ bundle: false, settings: { memorySizes: { providerEvents: 512 } } });
    expect(
      named.deliveryTemplate.findResources('AWS::Lambda::Function')[
        logicalId(named.delivery.functions.providerEvents.function)
      ]?.Properties?.MemorySize,
    ).toBe(512);
  });

  it('gives each function its own log group with retention and the observability key', () => {
    for (const key of FUNCTIONS) {
      template.hasResourceProperties('AWS::Logs::LogGroup', {
        RetentionInDays: 90,
        KmsKeyId: Match.anyValue(),
      });
      expect(template.findResources('AWS::Logs::LogGroup')[logicalId(fn(key).logGroup)], key).toBeDefined();
    }
  });

  it('gives the senders a timeout comfortably above the provider timeout and below the send lease', () => {
    const { providerTimeoutMs, sendLeaseMs } = synth.config.runtime;
    for (const key of ['sendEmail', 'sendSms'] as const) {
      const timeout = functionProps(key)?.Timeout as number;
      expect(timeout * 1000).toBeGreaterThanOrEqual(2 * providerTimeoutMs);
      expect(timeout * 1000).toBeLessThan(sendLeaseMs);
    }
  });
});

describe('delivery stack: environment (lambdas/contract names)', () => {
  // The core settings and every registered provider's own (its descriptor's variables).
  const runtimeKeys = new Set([
    ...Object.keys(ConfigSchema.shape),
    ...PROVIDERS.flatMap((p) => [
      ...p.descriptor.settings.map((s) => s.name),
      p.descriptor.secretVariable ?? '',
    ]),
  ]);
  const platformKeys = /^(NODE_OPTIONS|POWERTOOLS_[A-Z_]+|AWS_[A-Z_]+)$/;
  const everyFunction = [
    'LEDGER_TABLE_NAME',
    'OPEN_INDEX_SHARDS',
    'HOT_RETENTION',
    'ARCHIVE_RETENTION_YEARS',
    'EMAIL_PROVIDER',
    'SMS_PROVIDER',
    'PROVIDER_TIMEOUT_MS',
    'SEND_LEASE_MS',
    'RECONCILE_INTERVAL_MS',
    'UNKNOWN_GRACE_MS',
    'RETRY_BASE_MS',
    'RETRY_CAP_MS',
    'MAX_ATTEMPTS',
    'NOTICE_DEFAULT_DEADLINE_MS',
  ];
  const scheduling = ['SCHEDULE_GROUP_NAME', 'SCHEDULER_ROLE_ARN', 'ESCALATION_EVENT_BUS'];
  const required: Record<FunctionKey, string[]> = {
    http: [
      'EMAIL_QUEUE_URL',
      'SMS_QUEUE_URL',
      'ENVELOPE_KMS_KEY_ID',
      'FINGERPRINT_KEY_SECRET_ARN',
      'ARCHIVE_BUCKET',
      'KEY_TABLE_NAME',
      'WATCH_QUEUE_URL',
    ],
    sendEmail: [
      'EMAIL_QUEUE_URL',
      'EMAIL_QUEUE_ARN',
      'ENVELOPE_KMS_KEY_ID',
      'SES_FROM_ADDRESS',
      'SES_CONFIGURATION_SET',
      ...scheduling,
    ],
    sendSms: [
      'SMS_QUEUE_URL',
      'SMS_QUEUE_ARN',
      'ENVELOPE_KMS_KEY_ID',
      'TWILIO_SECRET_ARN',
      'PUBLIC_BASE_URL',
      ...scheduling,
    ],
    reconciler: [
      'EMAIL_QUEUE_URL',
      'EMAIL_QUEUE_ARN',
      'SMS_QUEUE_URL',
      'SMS_QUEUE_ARN',
      'ENVELOPE_KMS_KEY_ID',
      'TWILIO_SECRET_ARN',
      ...scheduling,
    ],
    providerEvents: ['TWILIO_SECRET_ARN', 'PUBLIC_BASE_URL'],
    watch: ['LEDGER_TABLE_NAME'],
    outcomeStream: ['OUTCOME_EVENT_BUS', 'LEDGER_TABLE_STREAM_ARN'],
    outcomeWebhooks: [],
    archiver: ['ARCHIVE_BUCKET', 'LEDGER_TABLE_STREAM_ARN', 'ARCHIVE_RETENTION_YEARS', 'KEY_TABLE_NAME'],
  };
  /** What a function must not hold: another function's secrets, keys and provider settings. */
  const forbidden: Record<FunctionKey, string[]> = {
    http: ['TWILIO_SECRET_ARN', 'SES_FROM_ADDRESS', 'PUBLIC_BASE_URL', 'SCHEDULER_ROLE_ARN'],
    sendEmail: ['FINGERPRINT_KEY_SECRET_ARN', 'TWILIO_SECRET_ARN'],
    sendSms: ['FINGERPRINT_KEY_SECRET_ARN', 'SES_FROM_ADDRESS'],
    reconciler: ['FINGERPRINT_KEY_SECRET_ARN', 'SES_FROM_ADDRESS'],
    providerEvents: ['FINGERPRINT_KEY_SECRET_ARN', 'ENVELOPE_KMS_KEY_ID', 'SES_FROM_ADDRESS'],
    watch: [
      'FINGERPRINT_KEY_SECRET_ARN',
      'ENVELOPE_KMS_KEY_ID',
      'TWILIO_SECRET_ARN',
      'EMAIL_QUEUE_URL',
      'WATCH_QUEUE_URL',
    ],
    outcomeStream: ['FINGERPRINT_KEY_SECRET_ARN', 'TWILIO_SECRET_ARN', 'OUTCOME_WEBHOOK_SECRET_ARN'],
    outcomeWebhooks: ['FINGERPRINT_KEY_SECRET_ARN', 'TWILIO_SECRET_ARN', 'ENVELOPE_KMS_KEY_ID'],
    archiver: [
      'FINGERPRINT_KEY_SECRET_ARN',
      'TWILIO_SECRET_ARN',
      'ENVELOPE_KMS_KEY_ID',
      'SES_FROM_ADDRESS',
      'EMAIL_QUEUE_URL',
    ],
  };

  it('sets only variables the runtime reads (no typos, no strays)', () => {
    for (const key of FUNCTIONS) {
      const strays = Object.keys(environmentOf(key)).filter(
        (v) => !runtimeKeys.has(v) && !platformKeys.test(v),
      );
      expect(strays, key).toEqual([]);
    }
  });

  it('sets what each function needs', () => {
    // The outcome functions and the archiver read the table's stream (or nothing of it), never its
    // items (the archiver writes key records to the key table).
    const itemless = new Set<FunctionKey>(['outcomeStream', 'outcomeWebhooks', 'archiver']);
    for (const key of FUNCTIONS) {
      const common = itemless.has(key)
        ? everyFunction.filter((name) => name !== 'LEDGER_TABLE_NAME')
        : everyFunction;
      expect(Object.keys(environmentOf(key)), key).toEqual(
        expect.arrayContaining([...common, ...required[key]]),
      );
      if (itemless.has(key)) expect(environmentOf(key).LEDGER_TABLE_NAME, key).toBeUndefined();
    }
  });

  it('passes the runtime’s own configuration parser (tokens stand in as strings)', () => {
    for (const key of FUNCTIONS) {
      const env = Object.fromEntries(
        Object.entries(environmentOf(key)).map(([name, value]) => [
          name,
          typeof value === 'string'
            ? value
            : name.endsWith('_URL')
              ? `https://token-${name}.example`
              : `token-${name}`,
        ]),
      );
      const config = readRuntimeConfig(env);
      expect(config.PROVIDER_TIMEOUT_MS, key).toBe(synth.config.runtime.providerTimeoutMs);
      expect(config.RECONCILE_INTERVAL_MS, key).toBe(60_000);
      expect(config.OPEN_INDEX_SHARDS, key).toBe(4);
    }
  });

  it('gives each function only its own secrets and provider settings (the fingerprint key to intake alone)', () => {
    for (const key of FUNCTIONS) {
      for (const name of forbidden[key]) expect(environmentOf(key)[name], `${key} ${name}`).toBeUndefined();
    }
  });

  it('environment-agnostic (API routes, lib/providers/webhook-ingress.ts): points PUBLIC_BASE_URL at the API’s own endpoint', () => {
    const expected = { 'Fn::GetAtt': [logicalId(synth.delivery.api.api), 'ApiEndpoint'] };
    expect(synth.delivery.webhookIngress).toBe('api-routes');
    expect(environmentOf('providerEvents').PUBLIC_BASE_URL).toEqual(expected);
    expect(environmentOf('sendSms').PUBLIC_BASE_URL).toEqual(expected);
    expect(template.toJSON().Outputs.TwilioWebhookUrl?.Value).toEqual({
      'Fn::Join': ['', [expected, '/v1/provider-events/twilio']],
    });
  });
});

// Twilio signs the full URL it calls, the StatusCallback the SMS sender names: that must be where
// the webhooks arrive, and what the provider-events function checks against.
describe('delivery stack: Twilio’s callback URL follows the webhooks’ ingress', () => {
  const env = (s: Synthesized, key: FunctionKey): Record<string, unknown> =>
    s.deliveryTemplate.findResources('AWS::Lambda::Function')[logicalId(s.delivery.functions[key].function)]
      ?.Properties.Environment.Variables ?? {};

  it('us-east-1: the SMS sender names the function URL’s origin; provider events, which cannot be given its own URL, takes the host it is called at', () => {
    const east = synthesizeIn('us-east-1');
    const url = east.delivery.webhookUrl?.functionUrl;
    expect(url).toBeDefined();
    // `https://` + the host of `https://<url-id>.lambda-url.us-east-1.on.aws/`.
    const host = {
      'Fn::Select': [
        2,
        { 'Fn::Split': ['/', { 'Fn::GetAtt': [logicalId(url as IConstruct), 'FunctionUrl'] }] },
      ],
    };
    const origin = { 'Fn::Join': ['', ['https://', host]] };
    expect(env(east, 'sendSms').PUBLIC_BASE_URL).toEqual(origin);
    expect(env(east, 'providerEvents').PUBLIC_BASE_URL).toBeUndefined();
    expect(env(east, 'providerEvents').TWILIO_SECRET_ARN).toBeDefined();
    const outputs = east.deliveryTemplate.toJSON().Outputs;
    expect(outputs.TwilioWebhookUrl?.Value).toEqual({
      'Fn::Join': ['', ['https://', host, '/v1/provider-events/twilio']],
    });
    // Behind its URL the function is bounded by reserved concurrency (the route throttle's rates).
    expect(
      east.deliveryTemplate.findResources('AWS::Lambda::Function')[
        logicalId(east.delivery.functions.providerEvents.function)
      ]?.Properties.ReservedConcurrentExecutions,
    ).toBe(10);
  }, 120_000);

  it('us-gov-west-1: the API’s endpoint for both; with publicBaseUrl (a custom domain of the API), that origin for both', () => {
    const gov = synthesizeIn('us-gov-west-1');
    const endpoint = { 'Fn::GetAtt': [logicalId(gov.delivery.api.api), 'ApiEndpoint'] };
    expect(gov.delivery.webhookUrl).toBeUndefined();
    expect(env(gov, 'sendSms').PUBLIC_BASE_URL).toEqual(endpoint);
    expect(env(gov, 'providerEvents').PUBLIC_BASE_URL).toEqual(endpoint);

    const domain = synthesizeIn('us-east-1', { publicBaseUrl: 'https://notices.example.org/' });
    expect(domain.delivery.webhookIngress).toBe('api-routes');
    expect(env(domain, 'sendSms').PUBLIC_BASE_URL).toBe('https://notices.example.org');
    expect(env(domain, 'providerEvents').PUBLIC_BASE_URL).toBe('https://notices.example.org');
    expect(domain.deliveryTemplate.toJSON().Outputs.TwilioWebhookUrl?.Value).toBe(
      'https://notices.example.org/v1/provider-events/twilio',
    );
    domain.deliveryTemplate.resourceCountIs('AWS::Lambda::Url', 0);
  }, 120_000);
});

describe('delivery stack: least privilege', () => {
  const table = (action: string) => `dynamodb:${action}`;

  it('grants no data action on Resource "*"', () => {
    for (const statement of identityStatements(template)) {
      const resources = Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
      expect(resources, JSON.stringify(statement.Action)).not.toContain('*');
    }
  });

  it('keeps every permission in one customer-managed policy per role (no inline policies)', () => {
    template.resourceCountIs('AWS::IAM::Policy', 0);
    for (const role of Object.values(template.findResources('AWS::IAM::Role'))) {
      expect(role.Properties.Policies).toBeUndefined();
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    }
  });

  it('http: table items without delete (the suppression list is append-only) + Query, Query on the open index (the operator list), enqueue both channels and their lanes, queue depths, seal only, read the fingerprint secret only, publish deadline-risk escalations', () => {
    const g = grants('http');
    expect([...g.keys()].filter((a) => a.startsWith('dynamodb:')).sort()).toEqual(
      ['GetItem', 'PutItem', 'Query', 'UpdateItem'].map(table),
    );
    // GET /v1/notices queries the open index: a grant on the table does not cover its index.
    const statements = roleStatements(template, logicalId(fn('http').role));
    const index = statements.find((s) => s.Sid === 'LedgerOpenIndex');
    expect(index?.Action).toBe('dynamodb:Query');
    expect(JSON.stringify(index?.Resource)).toMatch(/"\/index\/open-due"\]\]\}$/);
    const items = statements.find((s) => s.Sid === 'LedgerItems');
    expect(JSON.stringify(items?.Resource)).not.toContain('/index/');
    // Two channel queues and four lane queues (docs/architecture.md §11), and the watch queue
    // (docs/table-design.md "Watched rows").
    expect(g.get('sqs:SendMessage')).toHaveLength(7);
    expect(g.get('sqs:SendMessage')?.filter((r) => r.includes('WatchQueue'))).toHaveLength(1);
    expect(g.get('sqs:GetQueueAttributes')).toHaveLength(6);
    expect(g.get('events:PutEvents')).toEqual([
      JSON.stringify({ 'Fn::GetAtt': [logicalId(synth.delivery.escalations.bus), 'Arn'] }),
    ]);
    expect(g.has('kms:GenerateDataKey')).toBe(true);
    const secrets = g.get('secretsmanager:GetSecretValue') ?? [];
    expect(secrets).toHaveLength(1);
    expect(secrets[0]).toContain('SecretsFingerprintKey');
    for (const absent of ['scheduler:CreateSchedule', 'iam:PassRole', 'ses:SendEmail']) {
      expect(g.has(absent), absent).toBe(false);
    }
    // Intake seals envelopes; it never opens one.
    const envelope = roleStatements(template, logicalId(fn('http').role)).find(
      (s) => s.Sid === 'SealEnvelopes',
    );
    expect(envelope?.Action).toBe('kms:GenerateDataKey');
    expect(envelope?.Condition).toEqual({
      StringEquals: { 'kms:EncryptionContext:purpose': ENVELOPE_ENCRYPTION_CONTEXT.purpose },
    });
  });

  it('senders: Get/Update/Put item (Put: suppressions a provider implies), own queue and its lanes only, open envelopes, scheduler + PassRole, escalations', () => {
    for (const key of ['sendEmail', 'sendSms'] as const) {
      const g = grants(key);
      const statements = roleStatements(template, logicalId(fn(key).role));
      expect([...g.keys()].filter((a) => a.startsWith('dynamodb:')).sort(), key).toEqual(
        ['GetItem', 'PutItem', 'UpdateItem'].map(table),
      );
      expect(g.get('sqs:SendMessage'), key).toHaveLength(3);
      expect(g.has('sqs:ReceiveMessage'), key).toBe(true);
      expect(statements.find((s) => s.Sid === 'OpenEnvelopes')?.Action, key).toBe('kms:Decrypt');
      expect(
        statements.some((s) => s.Sid === 'SealEnvelopes'),
        key,
      ).toBe(false);
      const create = statements.find((s) => s.Sid === 'CreateRetrySchedules');
      expect(create?.Action, key).toBe('scheduler:CreateSchedule');
      expect(JSON.stringify(create?.Resource), key).toMatch(/:schedule\/notice-ledger-retries\/\*"\]\]\}$/);
      expect(
        statements.find((s) => s.Sid === 'PassSchedulerRole'),
        key,
      ).toMatchObject({
        Action: 'iam:PassRole',
        Condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      });
      expect(g.get('events:PutEvents'), key).toEqual([
        JSON.stringify({ 'Fn::GetAtt': [logicalId(synth.delivery.escalations.bus), 'Arn'] }),
      ]);
    }
    expect(grants('sendEmail').has('ses:SendEmail')).toBe(true);
    expect(grants('sendSms').has('ses:SendEmail')).toBe(false);
    // SES authorises by IAM: the e-mail sender reads no secret at all; the SMS sender Twilio's only.
    expect(grants('sendEmail').has('secretsmanager:GetSecretValue')).toBe(false);
    expect(grants('sendSms').get('secretsmanager:GetSecretValue')).toHaveLength(1);
  });

  it('e-mail sender: ses:SendEmail only as the configured sender, on its identity and configuration set', () => {
    const statement = roleStatements(template, logicalId(fn('sendEmail').role)).find(
      (s) => s.Sid === 'SendEmailAsTheNoticeSender',
    );
    expect(statement?.Condition).toEqual({ StringEquals: { 'ses:FromAddress': 'notices@example.com' } });
    const resources = JSON.stringify(statement?.Resource);
    expect(resources).toContain(':identity/example.com');
    expect(resources).toContain(':configuration-set/notice-ledger');
  });

  it('reconciler: Query on the open index only, Get/BatchGet/Update/Put items, both queues, open, its lookups’ secret, scheduler', () => {
    const statements = roleStatements(template, logicalId(fn('reconciler').role));
    const g = grants('reconciler');
    const index = statements.find((s) => s.Sid === 'LedgerOpenIndex');
    expect(index?.Action).toBe('dynamodb:Query');
    expect(JSON.stringify(index?.Resource)).toContain('/index/open-due');
    const items = statements.find((s) => s.Sid === 'LedgerItems');
    expect(items?.Action).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
    ]);
    expect(g.get('sqs:SendMessage')).toHaveLength(6);
    expect(g.get('sqs:GetQueueAttributes')).toHaveLength(6);
    expect(statements.find((s) => s.Sid === 'OpenEnvelopes')?.Action).toBe('kms:Decrypt');
    expect(g.get('secretsmanager:GetSecretValue')).toHaveLength(1);
    expect(g.has('scheduler:CreateSchedule') && g.has('iam:PassRole') && g.has('events:PutEvents')).toBe(
      true,
    );
  });

  it('provider events: Get/Update/Put item (suppressions), the inbound providers’ secret, nothing else of note', () => {
    const g = grants('providerEvents');
    expect([...g.keys()].filter((a) => a.startsWith('dynamodb:')).sort()).toEqual(
      ['GetItem', 'PutItem', 'UpdateItem'].map(table),
    );
    expect(g.get('secretsmanager:GetSecretValue')).toHaveLength(1);
    expect(g.has('kms:Decrypt') && g.get('kms:Decrypt')?.some((r) => r.includes('Envelope'))).toBe(false);
    for (const absent of ['scheduler:CreateSchedule', 'events:PutEvents', 'iam:PassRole']) {
      expect(g.has(absent), absent).toBe(false);
    }
    const sids = roleStatements(template, logicalId(fn('providerEvents').role)).map((s) => s.Sid);
    expect(sids).not.toContain('SealEnvelopes');
    expect(sids).not.toContain('OpenEnvelopes');
    // Only its DLQ (failed async invocations) is writable.
    expect(g.get('sqs:SendMessage')).toEqual([
      JSON.stringify({ 'Fn::GetAtt': [logicalId(synth.delivery.providerEventsDeadLetterQueue), 'Arn'] }),
    ]);
  });

  it('watch: Get/Update item of the table only, consumes the watch queue, no key, no secret, no other queue', () => {
    const g = grants('watch');
    expect([...g.keys()].filter((a) => a.startsWith('dynamodb:')).sort()).toEqual(
      ['GetItem', 'UpdateItem'].map(table),
    );
    expect(g.has('sqs:SendMessage')).toBe(false);
    expect(g.get('sqs:ReceiveMessage')?.every((r) => r.includes('WatchQueue'))).toBe(true);
    for (const absent of [
      'secretsmanager:GetSecretValue',
      'scheduler:CreateSchedule',
      'events:PutEvents',
      'iam:PassRole',
    ]) {
      expect(g.has(absent), absent).toBe(false);
    }
    // The table's key through DynamoDB only (its writes), never the envelope key.
    const sids = roleStatements(template, logicalId(fn('watch').role)).map((s) => s.Sid);
    expect(sids).not.toContain('OpenEnvelopes');
    expect(sids).not.toContain('SealEnvelopes');
    const source = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'))
      .map((m) => m.Properties)
      .find(
        (m) => JSON.stringify(m.FunctionName) === JSON.stringify({ Ref: logicalId(fn('watch').function) }),
      );
    expect(source).toMatchObject({
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 100,
      MaximumBatchingWindowInSeconds: 5,
    });
    expect(JSON.stringify(source?.EventSourceArn)).toContain('WatchQueue');
  });

  it('uses the table key only through DynamoDB and the data key only through Secrets Manager for secrets', () => {
    // Every function but the webhook sender, which reads nothing of the table.
    for (const key of FUNCTIONS.filter((k) => k !== 'outcomeWebhooks')) {
      const statements = roleStatements(template, logicalId(fn(key).role));
      const viaDynamo = statements.find((s) => s.Sid === 'LedgerTableKeyThroughDynamoDB');
      expect(JSON.stringify(viaDynamo?.Condition), key).toContain('dynamodb.');
      for (const s of statements.filter((st) => st.Sid?.startsWith('Decrypt') && st.Sid.endsWith('Secret'))) {
        expect(JSON.stringify(s.Condition), key).toContain('secretsmanager.');
      }
    }
  });
});

describe('delivery stack: SQS event sources', () => {
  it('reports batch item failures and caps concurrency per channel, one event source per lane', () => {
    const { email, sms } = synth.config.channels;
    const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping')).map(
      (m) => m.Properties,
    );
    for (const [key, channel] of [
      ['sendEmail', email],
      ['sendSms', sms],
    ] as const) {
      const own = mappings.filter(
        (m) => JSON.stringify(m.FunctionName) === JSON.stringify({ Ref: logicalId(fn(key).function) }),
      );
      // The channel queue (standard) and the critical and bulk lanes: three sources, three queues.
      expect(own, key).toHaveLength(3);
      expect(new Set(own.map((m) => JSON.stringify(m.EventSourceArn))).size, key).toBe(3);
      for (const m of own) {
        expect(m).toMatchObject({
          FunctionResponseTypes: ['ReportBatchItemFailures'],
          BatchSize: channel.batchSize,
          ScalingConfig: { MaximumConcurrency: channel.maxConcurrency },
        });
      }
      expect(channel.maxConcurrency).toBeGreaterThanOrEqual(2);
    }
    // The six lane queues, the watch queue, and the ledger's change stream twice (outcome events,
    // the archiver; no
    // webhook URL here).
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 9);
  });
});

describe('delivery stack: the lower lanes are capped from the rate', () => {
  it('with a known rate, standard and bulk hold at most R × their horizon in flight; critical keeps the channel concurrency', () => {
    const rate = { sms: 25, email: 14 };
    const capped = synthesize({
      bundle: false,
      settings: {
        smsSendRatePerSecond: rate.sms,
        smsMaxConcurrency: 50,
        emailSendRatePerSecond: rate.email,
        emailMaxConcurrency: 20,
      },
    });
    const mappings = Object.values(
      capped.deliveryTemplate.findResources('AWS::Lambda::EventSourceMapping'),
    ).map((m) => m.Properties);
    const source = (channel: 'sms' | 'email', queue: string) => {
      const found = mappings.filter((m) =>
        JSON.stringify(m.EventSourceArn).includes(`${cap(channel)}${queue}`),
      );
      expect(found, `${channel} ${queue}`).toHaveLength(1);
      return found[0];
    };
    for (const channel of ['sms', 'email'] as const) {
      for (const [lane, queue] of [
        ['standard', 'Queue'],
        ['bulk', 'BulkQueue'],
      ] as const) {
        const m = source(channel, queue);
        const inFlight = m.BatchSize * m.ScalingConfig.MaximumConcurrency;
        expect(inFlight, `${channel} ${lane}`).toBeLessThanOrEqual(
          (rate[channel] * LANE_BOOKING_HORIZON_MS[lane]) / 1000,
        );
        expect(m.ScalingConfig.MaximumConcurrency, channel).toBeGreaterThanOrEqual(2);
      }
      expect(source(channel, 'CriticalQueue').ScalingConfig.MaximumConcurrency).toBe(
        capped.config.channels[channel].maxConcurrency,
      );
    }
    // Without a rate (the default) there is no budget to book ahead of: every lane is as the channel.
    const bulk = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'))
      .map((m) => m.Properties)
      .filter((m) => JSON.stringify(m.EventSourceArn).includes('SmsBulkQueue'));
    expect(bulk[0]?.ScalingConfig).toEqual({ MaximumConcurrency: synth.config.channels.sms.maxConcurrency });
  });

  it('through a batching provider the caps count provider calls: a lower lane keeps one full call per invocation', () => {
    // 2 calls/s, 10 e-mails per call (Resend's batch call): records capped at R × 0.8 s would be
    // one per invocation and no call would carry more than one e-mail.
    const batched = synthesize({
      bundle: false,
      settings: {
        emailProvider: 'resend',
        emailBatchMax: 10,
        emailSendRatePerSecond: 2,
        emailMaxConcurrency: 20,
      },
    });
    const mappings = Object.values(batched.deliveryTemplate.findResources('AWS::Lambda::EventSourceMapping'))
      .map((m) => m.Properties)
      .filter((m) => JSON.stringify(m.EventSourceArn).includes('Email'));
    const lane = (queue: string) =>
      mappings.find((m) => JSON.stringify(m.EventSourceArn).includes(`Email${queue}`));
    for (const queue of ['Queue', 'BulkQueue']) {
      const m = lane(queue);
      expect(m?.BatchSize, queue).toBe(10);
      // Calls in flight: one per invocation, at Lambda's minimum concurrency.
      expect(m?.ScalingConfig.MaximumConcurrency, queue).toBe(2);
    }
    expect(lane('CriticalQueue')?.BatchSize).toBe(10);
    expect(lane('CriticalQueue')?.ScalingConfig.MaximumConcurrency).toBe(20);
  });
});

const cap = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

describe('delivery stack: HTTP API', () => {
  it('requires IAM on every route but the provider webhooks, one route per deployed webhook provider', () => {
    const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).map((r) => [
      r.Properties.RouteKey as string,
      r.Properties.AuthorizationType as string,
    ]);
    expect(Object.fromEntries(routes)).toEqual({
      'POST /v1/notices': 'AWS_IAM',
      'GET /v1/notices': 'AWS_IAM',
      'POST /v1/notices/batch': 'AWS_IAM',
      'GET /v1/notices/{noticeId}': 'AWS_IAM',
      'POST /v1/notices/{noticeId}/cancel': 'AWS_IAM',
      'POST /v1/notices/{noticeId}/channels/{channel}/resolution': 'AWS_IAM',
      'GET /v1/suppressions/{channel}/{destination}': 'AWS_IAM',
      'PUT /v1/suppressions/{channel}/{destination}': 'AWS_IAM',
      'DELETE /v1/suppressions/{channel}/{destination}': 'AWS_IAM',
      'GET /v1/health': 'AWS_IAM',
      'GET /v1/openapi.json': 'AWS_IAM',
      'POST /v1/provider-events/twilio': 'NONE',
    });
    // Each IAM route has the IAM authorizer's type and nothing else (no JWT, no custom authorizer).
    for (const [key, auth] of routes) if (auth === 'AWS_IAM') expect(key).not.toMatch(/provider-events/);
  });

  it('offers a submitter, an operator and an auditor policy, each scoped to exactly its routes on the $default stage', () => {
    const policies = template.findResources('AWS::IAM::ManagedPolicy');
    /** `METHOD /path` of every execute-api:Invoke resource of the policy (path parameters as `*`). */
    const routesOf = (policy: IConstruct) => {
      const statements = JSON.stringify(policies[logicalId(policy)]?.Properties.PolicyDocument.Statement);
      expect(statements).toContain('execute-api:Invoke');
      return [...statements.matchAll(/\/\$default\/([A-Z]+)(\/[^"]*)"/g)]
        .map((m) => `${m[1]} ${m[2]}`)
        .sort();
    };
    expect(routesOf(synth.delivery.api.submitterPolicy)).toEqual(
      [
        'GET /v1/openapi.json',
        'POST /v1/notices',
        'POST /v1/notices/batch',
        'GET /v1/notices/*',
        // A business system calls off what it no longer needs sent (appointment cancelled).
        'POST /v1/notices/*/cancel',
      ].sort(),
    );
    expect(routesOf(synth.delivery.api.operatorPolicy)).toEqual(
      [
        'GET /v1/health',
        'GET /v1/openapi.json',
        'POST /v1/notices',
        'GET /v1/notices',
        'POST /v1/notices/batch',
        'GET /v1/notices/*',
        'POST /v1/notices/*/cancel',
        'POST /v1/notices/*/channels/*/resolution',
        'GET /v1/suppressions/*/*',
        'PUT /v1/suppressions/*/*',
        'DELETE /v1/suppressions/*/*',
      ].sort(),
    );
    // Every read, no act (docs/api.md "Callers"): nothing that submits, cancels, resolves or suppresses.
    expect(routesOf(synth.delivery.api.auditorPolicy)).toEqual(
      [
        'GET /v1/health',
        'GET /v1/openapi.json',
        'GET /v1/notices',
        'GET /v1/notices/*',
        'GET /v1/suppressions/*/*',
      ].sort(),
    );
    // Each is one statement allowing execute-api:Invoke on its routes of this API, nothing else.
    for (const policy of [
      synth.delivery.api.submitterPolicy,
      synth.delivery.api.operatorPolicy,
      synth.delivery.api.auditorPolicy,
    ]) {
      const statements = policies[logicalId(policy)]?.Properties.PolicyDocument.Statement;
      expect(statements).toHaveLength(1);
      expect(statements[0]).toMatchObject({ Effect: 'Allow', Action: 'execute-api:Invoke' });
      for (const arn of statements[0].Resource) {
        expect(JSON.stringify(arn)).toContain(`"Ref":"${logicalId(synth.delivery.api.api)}"`);
      }
    }
  });

  it('hands the role map to the http function alone, as the deploy settings list it', () => {
    const withMap = synthesize({
      bundle: false,
      settings: {
        operatorPrincipals: [
          'arn:aws:iam::111122223333:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_Ops_*',
        ],
        auditorPrincipals: ['arn:aws:iam::111122223333:role/auditors'],
      },
    });
    const functions = withMap.deliveryTemplate.findResources('AWS::Lambda::Function');
    const env = (fn: IConstruct) => functions[logicalId(fn)]?.Properties.Environment.Variables;
    expect(env(withMap.delivery.functions.http.function)).toMatchObject({
      OPERATOR_PRINCIPALS:
        'arn:aws:iam::111122223333:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_Ops_*',
      AUDITOR_PRINCIPALS: 'arn:aws:iam::111122223333:role/auditors',
    });
    expect(env(withMap.delivery.functions.http.function).UNSIGNED_CALLER_PRINCIPAL).toBeUndefined();
    for (const name of ['sendEmail', 'sendSms', 'reconciler', 'providerEvents'] as const) {
      expect(env(withMap.delivery.functions[name].function).OPERATOR_PRINCIPALS, name).toBeUndefined();
    }
    // Unset: no variable, every signed caller a submitter.
    const defaults = template.findResources('AWS::Lambda::Function');
    const httpId = logicalId(synth.delivery.functions.http.function);
    expect(defaults[httpId]?.Properties.Environment.Variables.OPERATOR_PRINCIPALS).toBeUndefined();
    expect(defaults[httpId]?.Properties.Environment.Variables.LEDGER_TABLE_NAME).toBeDefined();
  });

  it('throttles the stage, and the open callback route harder', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 },
      RouteSettings: {
        'POST /v1/provider-events/twilio': { ThrottlingRateLimit: 20, ThrottlingBurstLimit: 40 },
      },
    });
  });

  it('creates the stage only after every route its RouteSettings name (API Gateway rejects it otherwise)', () => {
    const stages = Object.values(template.findResources('AWS::ApiGatewayV2::Stage'));
    const routes = Object.entries(template.findResources('AWS::ApiGatewayV2::Route'));
    expect(stages).toHaveLength(1);
    for (const stage of stages) {
      const keys = Object.keys(stage.Properties.RouteSettings ?? {});
      expect(keys.length).toBeGreaterThan(0);
      const dependsOn = [stage.DependsOn ?? []].flat() as string[];
      for (const key of keys) {
        const route = routes.filter(([, r]) => r.Properties.RouteKey === key).map(([id]) => id);
        expect(route, key).toHaveLength(1);
        expect(dependsOn, key).toContain(route[0]);
      }
    }
  });

  it('names the caller policies so IAM Identity Center permission sets can reference them', () => {
    const policies = template.findResources('AWS::IAM::ManagedPolicy');
    const nameOf = (policy: IConstruct) => policies[logicalId(policy)]?.Properties.ManagedPolicyName;
    const region = { Ref: 'AWS::Region' };
    expect(nameOf(synth.delivery.api.submitterPolicy)).toEqual({
      'Fn::Join': ['', ['notice-ledger-submitter-', region]],
    });
    expect(nameOf(synth.delivery.api.operatorPolicy)).toEqual({
      'Fn::Join': ['', ['notice-ledger-operator-', region]],
    });
    const nameOutput = (role: string) => ({
      Value: { 'Fn::Join': ['', [`notice-ledger-${role}-`, region]] },
    });
    template.hasOutput('SubmitterPolicyName', nameOutput('submitter'));
    template.hasOutput('OperatorPolicyName', nameOutput('operator'));
    expect(nameOf(synth.delivery.api.auditorPolicy)).toEqual({
      'Fn::Join': ['', ['notice-ledger-auditor-', region]],
    });
    template.hasOutput('AuditorPolicyName', nameOutput('auditor'));
    template.hasOutput('AuditorPolicyArn', { Value: { Ref: logicalId(synth.delivery.api.auditorPolicy) } });
  });

  it('writes JSON access logs with the route template and caller, never the raw path', () => {
    const stage = Object.values(template.findResources('AWS::ApiGatewayV2::Stage'))[0];
    const format = JSON.parse(stage?.Properties.AccessLogSettings.Format as string) as Record<string, string>;
    expect(format.routeKey).toBe('$context.routeKey');
    expect(format.caller).toBe('$context.identity.userArn');
    expect(Object.values(format).join(' ')).not.toMatch(/\$context\.path|\$context\.resourcePath/);
    expect(stage?.Properties.AccessLogSettings.DestinationArn).toEqual({
      'Fn::GetAtt': [logicalId(synth.delivery.api.accessLogs), 'Arn'],
    });
  });
});

describe('delivery stack: schedules and events', () => {
  it('runs the reconciler every minute from the default group, without retries', () => {
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(1 minute)',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: {
        Arn: { 'Fn::GetAtt': [logicalId(fn('reconciler').function), 'Arn'] },
        RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 },
      },
    });
    const schedule = Object.values(template.findResources('AWS::Scheduler::Schedule'))[0];
    expect(schedule?.Properties.GroupName).toBeUndefined();
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: logicalId(fn('reconciler').function) },
      MaximumRetryAttempts: 0,
    });
  });

  it('publishes SES events of its configuration set to the default bus and routes them to provider events', () => {
    template.hasResourceProperties('AWS::SES::ConfigurationSet', {
      Name: 'notice-ledger',
      DeliveryOptions: { TlsPolicy: 'REQUIRE' },
    });
    template.hasResourceProperties('AWS::SES::ConfigurationSetEventDestination', {
      EventDestination: {
        Enabled: true,
        MatchingEventTypes: Match.arrayEquals(
          ['delivery', 'bounce', 'complaint', 'reject', 'deliveryDelay', 'renderingFailure'].map((e) =>
            Match.exact(e),
          ),
        ),
        EventBridgeDestination: { EventBusArn: Match.anyValue() },
      },
    });
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.ses'],
        'detail-type': [
          'Email Delivered',
          'Email Bounced',
          'Email Complaint Received',
          'Email Rejected',
          'Email Delivery Delayed',
          'Email Rendering Failed',
        ],
        detail: { mail: { tags: { 'ses:configuration-set': ['notice-ledger'] } } },
      },
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [logicalId(fn('providerEvents').function), 'Arn'] },
          DeadLetterConfig: {
            Arn: { 'Fn::GetAtt': [logicalId(synth.delivery.providerEventsDeadLetterQueue), 'Arn'] },
          },
          RetryPolicy: { MaximumRetryAttempts: 185, MaximumEventAgeInSeconds: 86_400 },
        }),
      ],
    });
    expect(functionProps('providerEvents')?.DeadLetterConfig).toEqual({
      TargetArn: { 'Fn::GetAtt': [logicalId(synth.delivery.providerEventsDeadLetterQueue), 'Arn'] },
    });
  });

  it('forwards escalations from their own bus to the alarm topic, with the runtime’s source and detail-type', () => {
    expect(ESCALATION_SOURCE).toBe(RUNTIME_ESCALATION_SOURCE);
    expect(ESCALATION_DETAIL_TYPE).toBe(RUNTIME_ESCALATION_DETAIL_TYPE);
    template.hasResourceProperties('AWS::Events::Rule', {
      EventBusName: { Ref: logicalId(synth.delivery.escalations.bus) },
      EventPattern: { source: [ESCALATION_SOURCE], 'detail-type': [ESCALATION_DETAIL_TYPE] },
      Targets: [Match.objectLike({ Arn: { Ref: logicalId(synth.delivery.monitoring.topic) } })],
    });
  });

  it('binds envelope grants to the encryption context the KMS adapter uses (one contract)', () => {
    const source = readFileSync(join(ROOT, 'lambdas/adapters/crypto/kms-data-key-source.ts'), 'utf8');
    expect(source).toContain('ENVELOPE_ENCRYPTION_CONTEXT');
    expect(ENVELOPE_ENCRYPTION_CONTEXT).toEqual({ purpose: 'notice-ledger-envelope' });
  });
});

describe('delivery stack: alarms and dashboard', () => {
  const topicRef = () => ({ Ref: logicalId(synth.delivery.monitoring.topic) });

  it('encrypts the alarm topic with the observability key and requires TLS; only this account’s alarms and the escalation rule may publish', () => {
    template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
    const account = { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } };
    const [escalationRule] = Object.keys(
      template.findResources('AWS::Events::Rule', {
        Properties: { Description: 'notice-ledger escalations → alarm topic' },
      }),
    );
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({
            Sid: 'AlarmsOfThisAccount',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: 'sns:Publish',
            Condition: { StringEquals: account, ArnLike: { 'aws:SourceArn': Match.anyValue() } },
          }),
          Match.objectLike({
            Sid: 'EscalationsOfThisRule',
            Principal: { Service: 'events.amazonaws.com' },
            Action: 'sns:Publish',
            Condition: {
              StringEquals: account,
              ArnEquals: {
                'aws:SourceArn': { 'Fn::GetAtt': [escalationRule, 'Arn'] },
              },
            },
          }),
        ]),
      },
    });
    // Every Allow to a service principal carries both source conditions.
    const policies = Object.values(template.findResources('AWS::SNS::TopicPolicy'));
    const allows = policies.flatMap((p) =>
      (
        p.Properties.PolicyDocument.Statement as {
          Effect: string;
          Principal?: { Service?: unknown };
          Condition?: Record<string, Record<string, unknown>>;
        }[]
      ).filter((s) => s.Effect === 'Allow' && s.Principal?.Service),
    );
    expect(allows).toHaveLength(2);
    for (const statement of allows) {
      const keys = Object.values(statement.Condition ?? {}).flatMap((c) => Object.keys(c));
      expect(keys.sort(), JSON.stringify(statement.Principal)).toEqual([
        'aws:SourceAccount',
        'aws:SourceArn',
      ]);
    }
  });

  it('alarms on the oldest unresolved age (Maximum, missing data breaching) as the reconciler publishes it', () => {
    expect([...UNRESOLVED_STATES]).toEqual([...DOMAIN_UNRESOLVED_STATES]);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'NoticeLedger',
      MetricName: 'OldestUnresolvedAgeSeconds',
      Dimensions: [{ Name: 'service', Value: 'notice-ledger' }],
      Statistic: 'Maximum',
      Threshold: 3600,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'breaching',
      AlarmActions: [topicRef()],
    });
  });

  it('alarms on queue age, any dead letter, escalations, poison messages and each function’s errors', () => {
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties);
    const count = (namespace: string, metric: string) =>
      alarms.filter((a) => a.Namespace === namespace && a.MetricName === metric).length;
    // Each channel queue and lane queue; each of their DLQs, the provider events' DLQ, the watch
    // queue's, the outcome stream consumer's failures, the dead-lettered webhooks and the archiver's
    // given-up batches.
    expect(count('AWS/SQS', 'ApproximateAgeOfOldestMessage')).toBe(6);
    expect(count('AWS/SQS', 'ApproximateNumberOfMessagesVisible')).toBe(11);
    expect(count('NoticeLedger', 'Escalations')).toBe(1);
    expect(count('NoticeLedger', 'EscalationsPending')).toBe(1);
    expect(count('NoticeLedger', 'PoisonMessages')).toBe(1);
    // Provider failover: the primary needs a person even while the fallback carries the traffic.
    expect(count('NoticeLedger', 'ProviderFailovers')).toBe(1);
    // No silent waits: a provider's pre-send check unanswered for three periods in a row.
    expect(count('NoticeLedger', 'Deferred_provider_check_unavailable')).toBe(1);
    expect(count('AWS/Lambda', 'Errors')).toBe(9);
    // The archive's 15-minute bound at risk.
    expect(count('AWS/Lambda', 'IteratorAge')).toBe(1);
    expect(count('NoticeLedger', 'HttpInternalErrors')).toBe(1);
    expect(count('AWS/ApiGateway', '5xx')).toBe(1);
    // Provisioned capacity (tableCapacity): reads and writes throttled on the ledger table, its
    // open index and the key table.
    expect(count('AWS/DynamoDB', 'ReadThrottleEvents')).toBe(3);
    expect(count('AWS/DynamoDB', 'WriteThrottleEvents')).toBe(3);
    expect(alarms).toHaveLength(41);
    for (const alarm of alarms) {
      expect(alarm.AlarmActions).toEqual([topicRef()]);
      if (alarm.MetricName !== 'OldestUnresolvedAgeSeconds')
        expect(alarm.TreatMissingData).toBe('notBreaching');
      if (alarm.Namespace === 'NoticeLedger') {
        expect(alarm.Dimensions).toEqual([{ Name: 'service', Value: 'notice-ledger' }]);
      }
    }
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });

  it('alarms on every 5xx of the HTTP API, and on the 500s the router answers while the function succeeds', () => {
    const apiId = { Ref: logicalId(synth.delivery.api.api) };
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/ApiGateway',
      MetricName: '5xx',
      Dimensions: [{ Name: 'ApiId', Value: apiId }],
      Statistic: 'Sum',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: [topicRef()],
      OKActions: [topicRef()],
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'NoticeLedger',
      // The name the router publishes (lambdas/handlers/http/router.ts), from the one contract.
      MetricName: Metric.httpInternalErrors,
      Dimensions: [{ Name: 'service', Value: 'notice-ledger' }],
      Statistic: 'Sum',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: [topicRef()],
    });
  });

  it('has one dashboard with open rows per state, oldest age, queue ages, throttling, outcomes and deadline-risk warnings', () => {
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    const body = JSON.stringify(
      Object.values(template.findResources('AWS::CloudWatch::Dashboard'))[0]?.Properties.DashboardBody,
    );
    for (const needle of [
      ...UNRESOLVED_STATES.map((s) => `Open_${s}`),
      'OldestUnresolvedAgeSeconds',
      'ApproximateAgeOfOldestMessage',
      'Outcome_retry_scheduled',
      'Outcome_accepted',
      'Throttles',
      Metric.deadlineAtRisk,
      // Every row sent back without a move is measured, per cause.
      ...DEFERRAL_CAUSES.map(deferralMetric),
      Metric.reconcilerReenqueued,
    ]) {
      expect(body, needle).toContain(needle);
    }
  });

  it('reports no warnings or errors while synthesizing', () => {
    for (const stack of [synth.stateful, synth.delivery]) {
      expect(Annotations.fromStack(stack).findWarning('*', Match.anyValue())).toEqual([]);
      expect(Annotations.fromStack(stack).findError('*', Match.anyValue())).toEqual([]);
    }
  });
});

describe('delivery stack: outputs an operator names in a command', () => {
  it('names each function by the label of its alarm, the provider events’ DLQ and the API id', () => {
    const outputs = template.toJSON().Outputs;
    const labels = {
      http: 'Http',
      sendEmail: 'SendEmail',
      sendSms: 'SendSms',
      reconciler: 'Reconciler',
      providerEvents: 'ProviderEvents',
      watch: 'Watch',
      outcomeStream: 'OutcomeStream',
      outcomeWebhooks: 'OutcomeWebhooks',
      archiver: 'Archiver',
    } as const satisfies Record<FunctionKey, string>;
    for (const key of FUNCTIONS) {
      expect(outputs[`${labels[key]}FunctionName`]?.Value, key).toEqual({ Ref: logicalId(fn(key).function) });
      // The same label names its errors alarm (docs/deploy.md "When an alarm fires").
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: 'Errors',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(fn(key).function) } }],
      });
      expect(
        synth.delivery.monitoring.alarms.some((a) => a.node.id === `${labels[key]}Errors`),
        labels[key],
      ).toBe(true);
    }
    const dlq = logicalId(synth.delivery.providerEventsDeadLetterQueue);
    expect(outputs.ProviderEventsDeadLetterQueueArn?.Value).toEqual({ 'Fn::GetAtt': [dlq, 'Arn'] });
    expect(outputs.ProviderEventsDeadLetterQueueUrl?.Value).toEqual({ Ref: dlq });
    expect(outputs.ApiId?.Value).toEqual({ Ref: logicalId(synth.delivery.api.api) });
  });
});
