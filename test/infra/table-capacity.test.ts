import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { keyTableDefinition } from '../../lambdas/adapters/dynamodb/key-table.ts';
import { ledgerTableDefinition } from '../../lambdas/adapters/dynamodb/ledger-table.ts';
import { ConfigError } from '../../lambdas/contract/config-error.ts';
import { LedgerTable as Schema } from '../../lambdas/contract/ledger-table.ts';
import { TABLE_CAPACITY_DEFAULTS, type TableCapacity } from '../../lambdas/contract/table-capacity.ts';
import { DEPLOYMENT_ONLY_DEFAULTS, readConfig } from '../../lib/config.ts';
import { logicalId, type Synthesized, synthesize } from './synth.ts';

/*
 * `tableCapacity` (lambdas/contract/table-capacity.ts, lib/constructs/table-capacity.ts): the
 * ledger table, its open index and the key table provisioned with auto scaling by default, each
 * dimension its own scalable target and target-tracking policy; on demand when asked; throttle
 * alarms on every table and index in both modes.
 */

let provisioned: Synthesized;
let onDemand: Synthesized;

beforeAll(() => {
  provisioned = synthesize({ bundle: false });
  onDemand = synthesize({ bundle: false, settings: { tableCapacity: { mode: 'on-demand' } } });
});

const tableOf = (s: Synthesized, which: 'ledger' | 'keyTable') =>
  s.statefulTemplate.findResources('AWS::DynamoDB::Table')[
    logicalId(which === 'ledger' ? s.stateful.ledger.table : s.stateful.keyTable.table)
  ]?.Properties as Record<string, unknown>;

/** `table/<name>` or `table/<name>/index/<index>` of a scalable target, as CDK joins it. */
function resourceIdOf(target: Record<string, unknown>): string {
  return JSON.stringify(target.ResourceId);
}

/** A table's billing mode: CDK leaves PROVISIONED out, CloudFormation's default. */
const billingModeOf = (table: Record<string, unknown>) => table.BillingMode ?? 'PROVISIONED';

function scalableTargets(template: Template) {
  return Object.entries(template.findResources('AWS::ApplicationAutoScaling::ScalableTarget')).map(
    ([id, r]) =>
      ({ id, ...(r.Properties as Record<string, unknown>) }) as Record<string, unknown> & { id: string },
  );
}

describe('tableCapacity: provisioned with auto scaling (the default)', () => {
  const d = TABLE_CAPACITY_DEFAULTS;

  it('is the default, at a 70 % target utilisation', () => {
    expect(DEPLOYMENT_ONLY_DEFAULTS.tableCapacity.mode).toBe('provisioned');
    expect(readConfig({}).tableCapacity).toEqual(d);
    expect(d.targetUtilizationPercent).toBe(70);
  });

  it('bills both tables and the open index as provisioned, starting at the minimums', () => {
    for (const which of ['ledger', 'keyTable'] as const)
      expect(billingModeOf(tableOf(provisioned, which))).toBe('PROVISIONED');
    expect(tableOf(provisioned, 'ledger')).toMatchObject({
      ProvisionedThroughput: { ReadCapacityUnits: d.ledger.read.min, WriteCapacityUnits: d.ledger.write.min },
      GlobalSecondaryIndexes: [
        expect.objectContaining({
          IndexName: Schema.openIndexName,
          ProvisionedThroughput: {
            ReadCapacityUnits: d.openIndex.read.min,
            WriteCapacityUnits: d.openIndex.write.min,
          },
        }),
      ],
    });
    expect(tableOf(provisioned, 'keyTable')).toMatchObject({
      TableClass: 'STANDARD_INFREQUENT_ACCESS',
      ProvisionedThroughput: {
        ReadCapacityUnits: d.keyTable.read.min,
        WriteCapacityUnits: d.keyTable.write.min,
      },
    });
  });

  it('scales each table’s and the index’s reads and writes on their own, between min and max', () => {
    const targets = scalableTargets(provisioned.statefulTemplate);
    const ledger = logicalId(provisioned.stateful.ledger.table);
    const keys = logicalId(provisioned.stateful.keyTable.table);
    const expected = [
      { table: ledger, index: false, dimension: 'dynamodb:table:ReadCapacityUnits', range: d.ledger.read },
      { table: ledger, index: false, dimension: 'dynamodb:table:WriteCapacityUnits', range: d.ledger.write },
      { table: ledger, index: true, dimension: 'dynamodb:index:ReadCapacityUnits', range: d.openIndex.read },
      {
        table: ledger,
        index: true,
        dimension: 'dynamodb:index:WriteCapacityUnits',
        range: d.openIndex.write,
      },
      { table: keys, index: false, dimension: 'dynamodb:table:ReadCapacityUnits', range: d.keyTable.read },
      { table: keys, index: false, dimension: 'dynamodb:table:WriteCapacityUnits', range: d.keyTable.write },
    ];
    expect(targets).toHaveLength(expected.length);
    for (const want of expected) {
      const found = targets.filter(
        (t) =>
          t.ScalableDimension === want.dimension &&
          resourceIdOf(t).includes(want.table) &&
          resourceIdOf(t).includes(`/index/${Schema.openIndexName}`) === want.index,
      );
      expect(found, `${want.table} ${want.dimension}`).toHaveLength(1);
      expect(found[0]).toMatchObject({
        ServiceNamespace: 'dynamodb',
        MinCapacity: want.range.min,
        MaxCapacity: want.range.max,
      });
    }
  });

  it('tracks the target utilisation with one policy per scalable target', () => {
    const targets = scalableTargets(provisioned.statefulTemplate);
    const policies = Object.values(
      provisioned.statefulTemplate.findResources('AWS::ApplicationAutoScaling::ScalingPolicy'),
    ).map((p) => p.Properties);
    expect(policies).toHaveLength(targets.length);
    expect(new Set(policies.map((p) => p.ScalingTargetId.Ref))).toEqual(new Set(targets.map((t) => t.id)));
    for (const policy of policies) {
      expect(policy).toMatchObject({
        PolicyType: 'TargetTrackingScaling',
        TargetTrackingScalingPolicyConfiguration: {
          TargetValue: d.targetUtilizationPercent,
          PredefinedMetricSpecification: {
            PredefinedMetricType: expect.stringMatching(/^DynamoDB(Read|Write)CapacityUtilization$/),
          },
        },
      });
    }
  });

  it('takes a partial setting over the defaults: another target, another maximum', () => {
    const custom = synthesize({
      bundle: false,
      settings: { tableCapacity: { targetUtilizationPercent: 50, ledger: { write: { max: 10_000 } } } },
    });
    const targets = scalableTargets(custom.statefulTemplate);
    const ledgerWrites = targets.filter(
      (t) =>
        t.ScalableDimension === 'dynamodb:table:WriteCapacityUnits' &&
        resourceIdOf(t).includes(logicalId(custom.stateful.ledger.table)),
    );
    expect(ledgerWrites).toEqual([
      expect.objectContaining({ MinCapacity: d.ledger.write.min, MaxCapacity: 10_000 }),
    ]);
    custom.statefulTemplate.allResourcesProperties('AWS::ApplicationAutoScaling::ScalingPolicy', {
      TargetTrackingScalingPolicyConfiguration: Match.objectLike({ TargetValue: 50 }),
    });
  });

  it('the local stack creates the same billing (DynamoDB Local accepts provisioned throughput, never enforces it)', () => {
    const ledger = ledgerTableDefinition('t');
    expect(ledger.BillingMode).toBe(billingModeOf(tableOf(provisioned, 'ledger')));
    expect(ledger.ProvisionedThroughput).toEqual(tableOf(provisioned, 'ledger').ProvisionedThroughput);
    const cdkIndex = (tableOf(provisioned, 'ledger').GlobalSecondaryIndexes as Record<string, unknown>[])[0];
    expect(ledger.GlobalSecondaryIndexes?.[0]?.ProvisionedThroughput).toEqual(
      cdkIndex?.ProvisionedThroughput,
    );
    const keys = keyTableDefinition('t-keys');
    expect(keys.BillingMode).toBe(billingModeOf(tableOf(provisioned, 'keyTable')));
    expect(keys.ProvisionedThroughput).toEqual(tableOf(provisioned, 'keyTable').ProvisionedThroughput);
  });
});

describe('tableCapacity: on demand', () => {
  it('bills per request, with no throughput and nothing to scale', () => {
    for (const which of ['ledger', 'keyTable'] as const) {
      expect(tableOf(onDemand, which).BillingMode).toBe('PAY_PER_REQUEST');
      expect(tableOf(onDemand, which)).not.toHaveProperty('ProvisionedThroughput');
    }
    const indexes = tableOf(onDemand, 'ledger').GlobalSecondaryIndexes as Record<string, unknown>[];
    expect(indexes[0]).not.toHaveProperty('ProvisionedThroughput');
    onDemand.statefulTemplate.resourceCountIs('AWS::ApplicationAutoScaling::ScalableTarget', 0);
    onDemand.statefulTemplate.resourceCountIs('AWS::ApplicationAutoScaling::ScalingPolicy', 0);
  });

  it('the local stack creates it on demand too', () => {
    const capacity: TableCapacity = { ...TABLE_CAPACITY_DEFAULTS, mode: 'on-demand' };
    const ledger = ledgerTableDefinition('t', capacity);
    expect(ledger.BillingMode).toBe('PAY_PER_REQUEST');
    expect(ledger.ProvisionedThroughput).toBeUndefined();
    expect(ledger.GlobalSecondaryIndexes?.[0]?.ProvisionedThroughput).toBeUndefined();
    expect(keyTableDefinition('k', capacity).BillingMode).toBe('PAY_PER_REQUEST');
  });
});

describe('throttle alarms', () => {
  /** Each table's and the open index's reads and writes: the table by its logical id, the index by name. */
  const expectedAlarms = (s: Synthesized) => {
    const ledger = logicalId(s.stateful.ledger.table);
    const keys = logicalId(s.stateful.keyTable.table);
    return (['ReadThrottleEvents', 'WriteThrottleEvents'] as const).flatMap((metric) => [
      { metric, table: ledger, index: undefined },
      { metric, table: ledger, index: Schema.openIndexName },
      { metric, table: keys, index: undefined },
    ]);
  };

  it.each([
    ['provisioned', () => provisioned],
    ['on-demand', () => onDemand],
  ])('pages on 15 minutes of throttled reads or writes of each table and index (%s)', (_, synth) => {
    const s = synth();
    const alarms = Object.values(s.deliveryTemplate.findResources('AWS::CloudWatch::Alarm'))
      .map((a) => a.Properties)
      .filter((p) => p.Namespace === 'AWS/DynamoDB');
    expect(alarms).toHaveLength(expectedAlarms(s).length);
    for (const want of expectedAlarms(s)) {
      const matching = alarms.filter((a) => {
        const dimensions = a.Dimensions as { Name: string; Value: unknown }[];
        const index = dimensions.find((d) => d.Name === 'GlobalSecondaryIndexName')?.Value;
        const table = JSON.stringify(dimensions.find((d) => d.Name === 'TableName')?.Value);
        // The table's name crosses stacks as an import of the stateful stack's output.
        return a.MetricName === want.metric && index === want.index && table.includes(want.table);
      });
      expect(matching, `${want.metric} ${want.table} ${want.index ?? ''}`).toHaveLength(1);
      expect(matching[0]).toMatchObject({
        Statistic: 'Sum',
        Period: 300,
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 3,
        DatapointsToAlarm: 3,
        TreatMissingData: 'notBreaching',
        AlarmActions: [expect.anything()],
      });
    }
  });
});

describe('tableCapacity: what is refused', () => {
  it.each([
    [{ mode: 'provisioned-ish' }, /tableCapacity\.mode/],
    [{ targetUtilizationPercent: 95 }, /tableCapacity\.targetUtilizationPercent/],
    [{ ledger: { read: { min: 100, max: 10 } } }, /tableCapacity\.ledger\.read: min must not exceed max/],
    [{ keyTable: { write: { min: 0 } } }, /tableCapacity\.keyTable\.write\.min/],
    [{ openIndex: { reads: { min: 1 } } }, /tableCapacity\.openIndex: unexpected keys reads/],
  ])('%j', (tableCapacity, message) => {
    expect(() => readConfig({ tableCapacity })).toThrow(ConfigError);
    expect(() => readConfig({ tableCapacity })).toThrow(message);
  });
});
