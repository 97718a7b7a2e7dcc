import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Channel } from '../../../domain/channel.ts';
import type { GateHold, ThrottleGateStore } from '../../../ports/throttle-gate.port.ts';
import type { LedgerTableClient } from './table-client.ts';

/** The channel's throttle gate: one item `G#<channel>` / `G` with `closedUntil` (docs/table-design.md). */
const gateKey = (channel: Channel) => ({ pk: `G#${channel}`, sk: 'G' });

async function readHold(table: LedgerTableClient, channel: Channel): Promise<GateHold | undefined> {
  const out = await table.doc.send(
    new GetCommand({
      TableName: table.tableName,
      Key: gateKey(channel),
      // Eventually consistent is enough: a gate seen a moment late costs one extra 429.
      ProjectionExpression: 'closedUntil, reason',
      ...table.capacityOption,
    }),
  );
  table.meter('readGate', out.ConsumedCapacity);
  const until = out.Item?.closedUntil as number | undefined;
  return until === undefined ? undefined : { untilMs: until, reason: String(out.Item?.reason ?? 'held') };
}

async function closeGate(
  table: LedgerTableClient,
  channel: Channel,
  untilMs: number,
  reason: string,
): Promise<boolean> {
  const write = await table.writeIf('closeGate', () =>
    table.doc.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: gateKey(channel),
        UpdateExpression: 'SET closedUntil = :until, reason = :reason',
        // Only ever extend: two workers reporting different advice keep the later one.
        ConditionExpression: 'attribute_not_exists(closedUntil) OR closedUntil < :until',
        ExpressionAttributeValues: { ':until': untilMs, ':reason': reason },
        ...table.capacityOption,
      }),
    ),
  );
  return write.kind === 'written';
}

export function dynamoDbThrottleGate(table: LedgerTableClient): ThrottleGateStore {
  return {
    readGate: async (channel) => (await readHold(table, channel))?.untilMs,
    readHold: (channel) => readHold(table, channel),
    closeGate: (channel, untilMs, reason) => closeGate(table, channel, untilMs, reason),
  };
}
