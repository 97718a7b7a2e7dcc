import { type Intent, inOpenIndex } from '../domain/intent.ts';
import type { IntentTransitions, NoticeReader } from '../ports/intent-ledger.port.ts';
import type { IntentRef } from '../ports/intent-queue.port.ts';
import type { OpenIndex } from '../ports/open-index.port.ts';
import { forEachLimited } from './limited.ts';

/** What the watch reads and writes: the rows (a list read, then a consistent one) and `defer`. */
export interface WatchDependencies {
  readonly store: Pick<IntentTransitions, 'get'> & Pick<NoticeReader, 'getRows'> & Pick<OpenIndex, 'defer'>;
}

/**
 * What a watch found (docs/table-design.md "Watched rows"):
 *   indexed          still owed something (a crash, a backlog, a report not yet in): it entered the
 *                    open index, due when its own due time says, and the reconciler has it now
 *   in_index         in the open index already (it left the happy path, or an earlier watch)
 *   settled          owes nothing any more (resolved)
 *   look_again       no row yet: a reserve may still be on its way; the watch looks once more
 *   never_reserved   no row at the second look: intake never reserved it (a crash before the
 *                    write, a refused or invalid request), so nothing is owed
 */
export type WatchOutcome =
  | { readonly kind: 'indexed'; readonly state: Intent['state'] }
  | { readonly kind: 'in_index' | 'settled' | 'look_again' | 'never_reserved' };

/** Transitions racing one watch's write before it gives up (its message is delivered again). */
const MAX_RACES = 4;

/**
 * One watch per ref, `look` being how often its message was received. The rows are read together,
 * eventually consistent (0.5 RRU each): a stale read can only show an older version, and every
 * older version tells the same (a resolved row stays resolved, an indexed one stays indexed while
 * it owes something), but for a missing row, read again consistently, and a watched one, whose
 * `defer` is conditional on the version read. Returns the outcomes in the order of `refs`; a row
 * that could not be read or written throws, alone (its message is retried).
 */
export async function watchRows(
  refs: readonly (IntentRef & { readonly look: number })[],
  deps: WatchDependencies,
): Promise<(WatchOutcome | { readonly kind: 'error'; readonly error: unknown })[]> {
  const listed = await deps.store.getRows(refs.map(({ noticeId, channel }) => ({ noticeId, channel })));
  const byKey = new Map(listed.map((row) => [`${row.noticeId}|${row.channel}`, row]));
  const outcomes: (WatchOutcome | { kind: 'error'; error: unknown })[] = refs.map(() => ({
    kind: 'never_reserved',
  }));
  const errors = await forEachLimited(refs, async (ref, index) => {
    outcomes[index] = await watchOne(ref, byKey.get(`${ref.noticeId}|${ref.channel}`), deps);
  });
  for (const [index, error] of errors) outcomes[index] = { kind: 'error', error };
  return outcomes;
}

async function watchOne(
  ref: IntentRef & { readonly look: number },
  listed: Intent | undefined,
  deps: WatchDependencies,
): Promise<WatchOutcome> {
  let row = listed ?? (await deps.store.get(ref.noticeId, ref.channel));
  for (let race = 0; race < MAX_RACES; race++) {
    if (!row) return ref.look < 2 ? { kind: 'look_again' } : { kind: 'never_reserved' };
    if (row.dueAt === undefined) return { kind: 'settled' };
    if (inOpenIndex(row)) return { kind: 'in_index' };
    if (await deps.store.defer(row.noticeId, row.channel, row.version, row.dueAt)) {
      return { kind: 'indexed', state: row.state };
    }
    // It moved between the read and the write (a claim, an outcome): as it is now.
    row = await deps.store.get(ref.noticeId, ref.channel);
  }
  throw new Error(`row ${ref.noticeId} ${ref.channel} kept moving under its watch`);
}
