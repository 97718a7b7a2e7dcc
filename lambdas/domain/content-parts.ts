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
  /** `differs`: known to differ; `may_differ`: the recorded row cannot tell (written before per-variable digests). */
  readonly certainty: 'differs' | 'may_differ';
}

/** What a request is compared on: also what a key record keeps of a settled row (./archive-record.ts). */
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
  /** The paths of this part that differ, given the recorded row and the requested intent. */
  readonly differs: (recorded: ComparableContent, requested: ComparableContent) => readonly string[];
}

const field =
  (path: string, value: (intent: ComparableContent) => unknown): ContentPart['differs'] =>
  (recorded, requested) =>
    value(recorded) === value(requested) ? [] : [path];

export const CONTENT_PARTS: readonly ContentPart[] = [
  { differs: field('template.id', (i) => i.templateId) },
  { differs: field('template.version', (i) => i.templateVersion) },
  { differs: field('priority', (i) => priorityOf(i)) },
  { differs: field('fallback', (i) => (i.fallback ? fallbackDigestPart(i.fallback) : undefined)) },
  {
    differs: (recorded, requested) =>
      recorded.destination.fingerprint === requested.destination.fingerprint
        ? []
        : [recorded.channel === 'email' ? 'recipient.email' : 'recipient.phone'],
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
  const parts: DifferingPart[] = CONTENT_PARTS.flatMap((part) =>
    part.differs(recorded, requested).map((path) => ({ path, certainty: 'differs' as const })),
  );
  const variables = variableParts(recorded, requested);
  if (variables !== undefined)
    parts.push(...variables.map((path) => ({ path, certainty: 'differs' as const })));
  if (variables === undefined || parts.length === 0) {
    parts.push({ path: 'variables', certainty: parts.length === 0 ? 'differs' : 'may_differ' });
  }
  return parts;
}
