import type { Intent } from '../domain/intent.ts';
import type { NoticeReader } from '../ports/intent-ledger.port.ts';

/** The operator timeline: every channel row of a notice, with its full transition history. */
export async function readNotice(
  noticeId: string,
  deps: { readonly store: NoticeReader },
): Promise<Intent[] | undefined> {
  const rows = await deps.store.getNotice(noticeId);
  return rows.length > 0 ? rows : undefined;
}
