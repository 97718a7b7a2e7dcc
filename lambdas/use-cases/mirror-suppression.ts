import { type SuppressionSync, suppressionSyncContext } from '../ports/intent-queue.port.ts';
import type { SenderDependencies } from './dependencies.ts';

export type MirrorResult = 'mirrored' | 'not_kept_by_provider';

/**
 * An operator's suppression, mirrored into the channel provider's own list (its
 * suppression-sync facet) by the channel's sender, which holds the provider's credentials. A
 * provider that keeps no such list has nothing to do. Throws when the provider could not be told,
 * so the queue delivers the request again (and parks it in the DLQ in the end).
 */
export async function mirrorSuppression(
  sync: SuppressionSync,
  deps: SenderDependencies,
): Promise<MirrorResult> {
  const unconfigured = deps.unconfiguredProviders?.[sync.channel];
  // Not dropped: delivered again until the credentials are there, and parked in the DLQ in the end.
  if (unconfigured) throw new Error(`suppression not mirrored: ${unconfigured.detail}`);
  const add = deps.transports[sync.channel]?.suppressions?.add;
  if (!add) return 'not_kept_by_provider';
  const { destination } = await deps.sealer.open(sync.sealed, suppressionSyncContext(sync));
  await add.call(deps.transports[sync.channel]?.suppressions, destination, sync.reason);
  return 'mirrored';
}
