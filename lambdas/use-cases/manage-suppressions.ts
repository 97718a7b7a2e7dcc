import type { Channel } from '../domain/channel.ts';
import { resolveDestination } from '../domain/destination.ts';
import type { SuppressionEntry } from '../ports/ledger-store.port.ts';
import type { IntakeDependencies } from './dependencies.ts';

type Deps = Pick<IntakeDependencies, 'store' | 'fingerprintKey' | 'clock'>;

/** Throws `InvalidDestinationError` for a destination that cannot be normalised. */
function fingerprintOf(channel: Channel, rawDestination: string, deps: Deps) {
  return resolveDestination(deps.fingerprintKey, channel, rawDestination);
}

export async function getSuppression(
  channel: Channel,
  rawDestination: string,
  deps: Deps,
): Promise<SuppressionEntry | undefined> {
  return deps.store.getSuppression(channel, fingerprintOf(channel, rawDestination, deps).fingerprint);
}

export async function putSuppression(
  channel: Channel,
  rawDestination: string,
  input: { reason: string; detail?: string | undefined },
  deps: Deps,
): Promise<{ entry: SuppressionEntry; created: boolean }> {
  const destination = fingerprintOf(channel, rawDestination, deps);
  const existing = await deps.store.getSuppression(channel, destination.fingerprint);
  const entry: SuppressionEntry = {
    channel,
    fingerprint: destination.fingerprint,
    masked: destination.masked,
    reason: input.reason,
    source: 'operator',
    createdAt: deps.clock.now(),
    detail: input.detail,
  };
  await deps.store.putSuppression(entry);
  return { entry, created: existing === undefined };
}

export async function deleteSuppression(
  channel: Channel,
  rawDestination: string,
  deps: Deps,
): Promise<boolean> {
  return deps.store.deleteSuppression(channel, fingerprintOf(channel, rawDestination, deps).fingerprint);
}
