import type { Intent } from '../domain/intent.ts';
import type { BatchRecords } from '../ports/batch-records.port.ts';
import type { BatchLookup } from '../ports/provider-lookup.port.ts';
import type { EmailMessage } from '../ports/transport.port.ts';
import type { WorkerDependencies } from './dependencies.ts';
import { renderMessage } from './messages.ts';

export type BatchContext =
  /** The batch record exists: the call, rebuilt exactly as it was made. */
  | { readonly kind: 'batch'; readonly batch: BatchLookup }
  /**
   * No record: the sender writes it before the call (docs/architecture.md §4, "One dispatch path"), so the
   * call was never made; the lookup can say `absent` without asking the provider.
   */
  | { readonly kind: 'never_sent'; readonly detail: string }
  /** The record cannot be turned back into the call (a template gone, an unreadable envelope). */
  | { readonly kind: 'unreadable'; readonly detail: string };

/**
 * The batch call an `unknown` row's attempt rode in, for its lookup: the record's members in the
 * call's order, each rendered again from its own copy of its envelope (bound to its own row), so
 * the replay is byte for byte the request that was sent even when other members' rows are
 * finished and dropped their envelopes.
 */
export async function batchContextOf(
  row: Intent & { readonly batch: string },
  deps: Pick<WorkerDependencies, 'sealer' | 'catalog'> & { readonly store: Pick<BatchRecords, 'getBatch'> },
): Promise<BatchContext> {
  const record = await deps.store.getBatch(row.batch);
  if (!record) {
    return { kind: 'never_sent', detail: `batch ${row.batch} was never recorded: its call was not made` };
  }
  const index = record.members.findIndex((m) => m.noticeId === row.noticeId && m.channel === row.channel);
  if (index === -1) return { kind: 'unreadable', detail: `batch ${row.batch} does not list this row` };
  const messages: EmailMessage[] = [];
  for (const member of record.members) {
    const template = deps.catalog.lookup(member.templateId, member.templateVersion);
    if (!template)
      return { kind: 'unreadable', detail: `batch ${row.batch}: a member's template is missing` };
    try {
      const envelope = await deps.sealer.open(member.envelope, {
        noticeId: member.noticeId,
        channel: member.channel,
      });
      const message = renderMessage(member, template, envelope);
      if ('body' in message)
        return { kind: 'unreadable', detail: `batch ${row.batch} is not an email batch` };
      messages.push(message);
    } catch (error) {
      return {
        kind: 'unreadable',
        detail: `batch ${row.batch}: a member cannot be rebuilt (${error instanceof Error ? error.name : 'error'})`,
      };
    }
  }
  return {
    kind: 'batch',
    batch: {
      id: record.id,
      idempotencyKey: record.idempotencyKey,
      createdAt: record.createdAt,
      index,
      messages,
    },
  };
}
