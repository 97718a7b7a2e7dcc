import {
  ConditionalCheckFailedException,
  type ConsumedCapacity,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Channel } from '../../domain/channel.ts';
import type { RateClockStore } from '../../ports/rate-budget.port.ts';

export interface DynamoDbRateClockOptions {
  readonly client: DynamoDBClient;
  /** The ledger table: the clock is one more item family in it (`P#<channel>`, sk `P`). */
  readonly tableName: string;
  readonly onConsumedCapacity?: (operation: string, capacity: ConsumedCapacity | undefined) => void;
}

const clockKey = (channel: Channel) => ({ pk: `P#${channel}`, sk: 'P' });

/**
 * The rate budget's clock as one item per channel. Every operation is one UpdateItem (an
 * `ADD`, or a `SET` under a condition), so bookers never read before they write and never fail
 * for each other; the clock is an integer, so the conditions compare it exactly. The item has no
 * `openShard`, so it never enters the open index.
 */
export class DynamoDbRateClock implements RateClockStore {
  private readonly doc: DynamoDBDocumentClient;

  constructor(private readonly options: DynamoDbRateClockOptions) {
    this.doc = DynamoDBDocumentClient.from(options.client);
  }

  private get capacityOption() {
    return this.options.onConsumedCapacity ? ({ ReturnConsumedCapacity: 'TOTAL' } as const) : {};
  }

  async advance(channel: Channel, byUs: number): Promise<number> {
    const out = await this.doc.send(
      new UpdateCommand({
        TableName: this.options.tableName,
        Key: clockKey(channel),
        UpdateExpression: 'ADD clockUs :by',
        ExpressionAttributeValues: { ':by': byUs },
        ReturnValues: 'UPDATED_NEW',
        ...this.capacityOption,
      }),
    );
    this.options.onConsumedCapacity?.('bookTokens', out.ConsumedCapacity);
    return out.Attributes?.clockUs as number;
  }

  private async conditionalSet(
    operation: string,
    channel: Channel,
    toUs: number,
    condition: string,
    values: Record<string, number>,
  ): Promise<boolean> {
    try {
      const out = await this.doc.send(
        new UpdateCommand({
          TableName: this.options.tableName,
          Key: clockKey(channel),
          UpdateExpression: 'SET clockUs = :to',
          ConditionExpression: condition,
          ExpressionAttributeValues: { ':to': toUs, ...values },
          ...this.capacityOption,
        }),
      );
      this.options.onConsumedCapacity?.(operation, out.ConsumedCapacity);
      return true;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // A failed condition is billed as a write too.
      this.options.onConsumedCapacity?.(operation, undefined);
      return false;
    }
  }

  restart(channel: Channel, toUs: number, ifAtOrBeforeUs: number): Promise<boolean> {
    return this.conditionalSet(
      'restartClock',
      channel,
      toUs,
      'attribute_not_exists(clockUs) OR clockUs <= :before',
      { ':before': ifAtOrBeforeUs },
    );
  }

  replace(channel: Channel, toUs: number, ifEqualsUs: number): Promise<boolean> {
    return this.conditionalSet('pullUpClock', channel, toUs, 'clockUs = :seen', { ':seen': ifEqualsUs });
  }

  async read(channel: Channel): Promise<number | undefined> {
    const out = await this.doc.send(
      new GetCommand({
        TableName: this.options.tableName,
        Key: clockKey(channel),
        ProjectionExpression: 'clockUs',
        ...this.capacityOption,
      }),
    );
    this.options.onConsumedCapacity?.('readClock', out.ConsumedCapacity);
    return out.Item?.clockUs as number | undefined;
  }
}
