import type { Channel } from '../domain/channel.ts';
import {
  isSuppressed,
  type SuppressionAction,
  type SuppressionRecord,
  type SuppressionSource,
} from '../domain/suppression.ts';
import type { SuppressionHistory } from '../ports/suppressions.port.ts';

/**
 * The body of `GET` and `PUT /v1/suppressions/{channel}/{destination}` (docs/api.md "Suppressions"):
 * the effective state, its latest record and the history, oldest first. Built field by field
 * from the domain records; the destination only as fingerprint and masked form. Times are
 * ISO 8601 UTC; `code` is `null` when the record has none, so every record has the full shape.
 */
export interface SuppressionRecordView {
  readonly action: SuppressionAction;
  readonly reason: string;
  readonly source: SuppressionSource;
  readonly actor: string;
  readonly at: string;
  readonly code: string | null;
}

export interface SuppressionView {
  readonly channel: Channel;
  readonly destination: { readonly fingerprint: string; readonly masked: string };
  readonly suppressed: boolean;
  readonly latest: SuppressionRecordView;
  readonly history: readonly SuppressionRecordView[];
  readonly historyTruncated: boolean;
}

const iso = (epochMs: number): string => new Date(epochMs).toISOString();

function toRecord(record: SuppressionRecord): SuppressionRecordView {
  return {
    action: record.action,
    reason: record.reason,
    source: record.source,
    actor: record.actor,
    at: iso(record.at),
    code: record.code ?? null,
  };
}

export function toSuppressionView(history: SuppressionHistory): SuppressionView {
  const { state } = history;
  return {
    channel: state.channel,
    destination: { fingerprint: state.fingerprint, masked: state.masked },
    suppressed: isSuppressed(state),
    latest: toRecord(state.latest),
    history: history.records.map(toRecord),
    historyTruncated: history.truncated,
  };
}
