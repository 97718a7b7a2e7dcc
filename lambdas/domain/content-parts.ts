import type { Channel } from './channel.ts';
import { fallbackDigestPart } from './fallback.ts';
import type { Intent } from './intent.ts';
import { priorityOf } from './priority.ts';

/**
 * What a 409 says differs between a recorded intent and a request for the same
 * (noticeId, channel): paths into the request (`template.version`, `variables.firstName`,
 * `recipient.phone`), never values. Template and destination are compared on the row's own
 * fields (id, version, fingerprint); variables on their per-variable digests.
 *
 * A field that joins the content later is one more entry in `CONTENT_PARTS` (as `priority` did).
 */
export interface DifferingPart {
  readonly path: string;
  /**
   * `differs`: known to differ; `may_differ`: the record cannot tell (a row written before
   * per-variable digests, or an archived row that could not be read).
   */
  readonly certainty: 'differs' | 'may_differ';
}

/** What a request is compared on: a recorded row's (in the table, or archived) against the request's. */
export type ComparableContent = Pick<
  Intent,
  | 'channel'
  | 'templateId'
  | 'templateVersion'
  | 'destination'
  | 'contentDigest'
  | 'variableDigests'
  | 'priority'
  | 'fallback'
>;

interface ContentPart {
  /** The request's path this part names in a 409 (the destination's depends on the channel). */
  readonly path: (channel: Channel) => string;
  /** What is compared: equal values, the same part. */
  readonly value: (content: ComparableContent) => unknown;
}

export const CONTENT_PARTS: readonly ContentPart[] = [
  { path: () => 'template.id', value: (i) => i.templateId },
  { path: () => 'template.version', value: (i) => i.templateVersion },
  { path: () => 'priority', value: (i) => priorityOf(i) },
  { path: () => 'fallback', value: (i) => (i.fallback ? fallbackDigestPart(i.fallback) : undefined) },
  {
    path: (channel) => (channel === 'email' ? 'recipient.email' : 'recipient.phone'),
    value: (i) => i.destination.fingerprint,
  },
];

function variableParts(recorded: ComparableContent, requested: ComparableContent): string[] | undefined {
  const a = recorded.variableDigests;
  const b = requested.variableDigests;
  if (a === undefined || b === undefined) return undefined;
  const names = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return names.filter((name) => a[name] !== b[name]).map((name) => `variables.${name}`);
}

/**
 * The parts in which `requested` differs from `recorded`. Empty when their content digests
 * agree. When the digests disagree but no compared part does (a row from before per-variable
 * digests, or a 48-bit digest collision), `variables` is reported: the one part the content
 * digest covers that could not be compared.
 */
export function differingParts(recorded: ComparableContent, requested: ComparableContent): DifferingPart[] {
  if (recorded.contentDigest === requested.contentDigest) return [];
  const parts: DifferingPart[] = CONTENT_PARTS.filter(
    (part) => part.value(recorded) !== part.value(requested),
  ).map((part) => ({ path: part.path(recorded.channel), certainty: 'differs' as const }));
  const variables = variableParts(recorded, requested);
  if (variables !== undefined)
    parts.push(...variables.map((path) => ({ path, certainty: 'differs' as const })));
  if (variables === undefined || parts.length === 0) {
    parts.push({ path: 'variables', certainty: parts.length === 0 ? 'differs' : 'may_differ' });
  }
  return parts;
}

/**
 * What a 409 names when the content is known to differ (the digests disagree) but the recorded
 * content cannot be read to say where: a key record whose archived row is unreadable (docs/api.md
 * "409: what differs"). Every part the content digest covers, `may_differ`: still a conflict
 * (nothing is sent again), naming where to look, claiming none.
 */
export function undeterminedParts(channel: Channel): DifferingPart[] {
  return [
    ...CONTENT_PARTS.map((part) => ({ path: part.path(channel), certainty: 'may_differ' as const })),
    { path: 'variables', certainty: 'may_differ' },
  ];
}
