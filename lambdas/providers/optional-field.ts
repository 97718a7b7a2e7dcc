import type { z } from 'zod';

/**
 * An optional member of a provider's answer or event, read as the provider's contract allows:
 * absent, or `null` — which many providers write for "no value" (`{"suppressed": false,
 * "reason": null}`) — both read as absent (`undefined`); any other value must match `schema`.
 * Every optional member of every provider module's schemas is declared through this, so that a
 * `null` never turns an answer unreadable (test/providers/conformance.ts, "reads null … as absent").
 */
export function optional<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((value): z.output<T> | undefined => value ?? undefined);
}
