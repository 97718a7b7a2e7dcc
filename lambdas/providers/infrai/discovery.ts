/**
 * The on-call check before changing this adapter (`npm run providers:check`): the gateway
 * describes each capability at `GET {base}/discovery/{capability}` (public, no key); every call
 * this module makes is compared with it — a parameter we send that the schema does not list, a
 * required one we omit, a method or path that moved, a capability that is gone. Nothing is sent.
 */
import { z } from 'zod';
import { optional } from '../optional-field.ts';
import { CALLS, type CallId, EnvelopeSchema } from './api.ts';

const CapabilitySchema = z.object({
  id: optional(z.string()),
  method: optional(z.string()),
  path: optional(z.string()),
  available: optional(z.boolean()),
  params: z.array(z.object({ name: z.string(), required: optional(z.boolean()) })),
});

export interface CapabilityCheck {
  readonly capability: CallId;
  readonly problems: readonly string[];
}

/** Compares every call of this module with the gateway's discovery schema. */
export async function checkDiscovery(
  baseUrl: string,
  fetchImpl: typeof fetch = fetch,
  timeoutMs = 10_000,
): Promise<CapabilityCheck[]> {
  const base = baseUrl.replace(/\/+$/, '');
  const results: CapabilityCheck[] = [];
  for (const [id, call] of Object.entries(CALLS) as [CallId, (typeof CALLS)[CallId]][]) {
    const problems: string[] = [];
    try {
      const response = await fetchImpl(`${base}/discovery/${encodeURIComponent(id)}`, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
      });
      const envelope = EnvelopeSchema.safeParse(await response.json().catch(() => undefined));
      if (!envelope.success) problems.push(`answer ${response.status} is not a gateway envelope`);
      else if (!envelope.data.ok)
        problems.push(`not described (${envelope.data.error?.code ?? response.status})`);
      else {
        const capability = CapabilitySchema.safeParse(envelope.data.data);
        if (!capability.success) problems.push('description has no parameter list');
        else {
          const c = capability.data;
          if (c.method && c.method.toUpperCase() !== call.method)
            problems.push(`method is ${c.method}, we use ${call.method}`);
          if (c.path && !c.path.endsWith(call.path)) problems.push(`path is ${c.path}, we use ${call.path}`);
          if (c.available === false) problems.push('marked unavailable');
          const listed = new Set(c.params.map((p) => p.name));
          const sent = new Set<string>(call.sends);
          for (const name of sent)
            if (!listed.has(name)) problems.push(`we send "${name}", which the schema does not list`);
          for (const p of c.params)
            if (p.required && !sent.has(p.name)) problems.push(`required "${p.name}" is not sent`);
        }
      }
    } catch (error) {
      problems.push(`discovery unreachable (${error instanceof Error ? error.name : 'error'})`);
    }
    results.push({ capability: id, problems });
  }
  return results;
}
