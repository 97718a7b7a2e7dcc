import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Intent } from '../../../domain/intent.ts';
import type { LedgerChange } from '../../../ports/outcome-sink.port.ts';
import { intentFromItem } from './intent-items.ts';

/** A change stream record as Lambda's DynamoDB event source (and the local one) hands it over. */
export interface StreamRecordLike {
  readonly eventName?: string | undefined;
  readonly dynamodb?:
    | {
        readonly Keys?: Record<string, unknown> | undefined;
        readonly OldImage?: Record<string, unknown> | undefined;
        readonly NewImage?: Record<string, unknown> | undefined;
        readonly SequenceNumber?: string | undefined;
      }
    | undefined;
}

/** An intent row's key (`N#<noticeId>` / `C#<channel>`, lambdas/contract/ledger-table.ts); the other item families are not outcomes. */
function isIntentImage(image: Record<string, unknown> | undefined): boolean {
  const pk = (image?.pk as { S?: string } | undefined)?.S;
  const sk = (image?.sk as { S?: string } | undefined)?.S;
  return Boolean(pk?.startsWith('N#') && sk?.startsWith('C#'));
}

function intentOf(image: Record<string, unknown> | undefined): Intent | undefined {
  return image ? intentFromItem(unmarshall(image as Record<string, AttributeValue>)) : undefined;
}

/**
 * The ledger changes among stream records, in stream order: intent rows only (suppressions, gates,
 * budgets and batch records are the ledger's own bookkeeping), each with its position (the
 * record's sequence number, which a partial batch failure names).
 */
export function ledgerChangesOf(records: readonly StreamRecordLike[]): LedgerChange[] {
  return records.flatMap((record) => {
    const images = record.dynamodb;
    if (!images || !isIntentImage(images.NewImage ?? images.OldImage ?? images.Keys)) return [];
    return [
      {
        position: images.SequenceNumber ?? '',
        oldImage: intentOf(images.OldImage),
        newImage: intentOf(images.NewImage),
      },
    ];
  });
}
