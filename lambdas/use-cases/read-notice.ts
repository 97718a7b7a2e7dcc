import { type Caller, canSee } from '../domain/caller.ts';
import type { Intent } from '../domain/intent.ts';
import type { NoticeReader } from '../ports/intent-ledger.port.ts';

/**
 * The timeline: every channel row of a notice the caller may see, with its full transition
 * history. None (no such notice, or none of its rows the caller's): undefined, the same answer
 * either way, so a notice id tells a submitter nothing about other submitters' notices.
 */
export async function readNotice(
  noticeId: string,
  caller: Caller,
  deps: { readonly store: NoticeReader },
): Promise<Intent[] | undefined> {
  const rows = (await deps.store.getNotice(noticeId)).filter((row) => canSee(caller, row));
  return rows.length > 0 ? rows : undefined;
}
