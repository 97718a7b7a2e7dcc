import type { ProviderOutcome } from '../../domain/outcome.ts';
import type { LookupVerdict } from '../../domain/reconcile.ts';
import type { LookupFacet } from '../../ports/provider.port.ts';
import type { BatchLookup, LookupQuery, ProviderLookup } from '../../ports/provider-lookup.port.ts';
import type { EmailMessage } from '../../ports/transport.port.ts';
import {
  batchBody,
  call,
  emailIdOf,
  outcomeOfSend,
  outcomesOfBatch,
  type ResendApiConfig,
  SAFE_REPLAY_MS,
  sendBody,
} from './api.ts';
import { descriptor } from './descriptor.ts';
import { resendConfigOf } from './transport.ts';

/** Allowance between our clock and Resend's when matching a listing by time. */
const CLOCK_SKEW_MS = 60_000;
const LIST_PAGE_SIZE = 100;
const LIST_MAX_PAGES = 10;
/** A batch's replay answers every member asked about within this long (one call per batch). */
const BATCH_REPLAY_REUSE_MS = 30_000;

/**
 * How the reconciler settles an ambiguous Resend attempt:
 *  1. within the replay window of the key (measured from its first use, with a margin) and
 *     before the row's deadline: replay the same request under the same key. Resend answers a
 *     request it already took with that email's id and sends nothing; one it never got, it
 *     takes now, once (then this replay is the send, and the id is still the one email). The
 *     request is rebuilt from the row's envelope (rendering is deterministic), or, for an
 *     attempt that rode in a batch, from the batch record, and replayed as the whole batch;
 *  2. past it: page `GET /emails` newest first over the attempt's window and match recipient,
 *     subject and time; one match is `found`, several are `undecidable`, none in a complete
 *     listing is `absent`;
 *  3. anything the provider will not answer now (429, 5xx, a 409) is `undecidable`: asked again.
 * Past the deadline no replay is made (it could be a first send), only the listing.
 */
export class ResendProviderLookup implements ProviderLookup {
  readonly provider = descriptor.id;
  readonly #config: ResendApiConfig;
  readonly #now: () => number;
  readonly #batchReplays = new Map<string, { at: number; outcomes: Promise<ProviderOutcome[]> }>();

  constructor(config: ResendApiConfig) {
    this.#config = config;
    this.#now = config.now ?? Date.now;
  }

  async lookup(query: LookupQuery): Promise<LookupVerdict> {
    const now = this.#now();
    const beforeDeadline = query.deadline === undefined || now < query.deadline;
    if (query.batch) {
      if (beforeDeadline && now - query.batch.createdAt < SAFE_REPLAY_MS)
        return this.#replayBatch(query.batch);
    } else if (
      query.replay &&
      'subject' in query.replay &&
      beforeDeadline &&
      now - (query.keyFirstUsedAt ?? query.attemptStartedAt) < SAFE_REPLAY_MS
    ) {
      return this.#replay(query.replay);
    }
    return this.#list(query);
  }

  async #replay(message: EmailMessage): Promise<LookupVerdict> {
    const outcome = await whileInProgress(async () =>
      outcomeOfSend(
        await call(this.#config, {
          method: 'POST',
          path: '/emails',
          body: sendBody(message, this.#config.from),
          headers: { 'idempotency-key': message.idempotencyKey },
        }),
        this.#now(),
      ),
    );
    return verdictOf(outcome, 'replayed under its idempotency key');
  }

  #replayBatch(batch: BatchLookup): Promise<LookupVerdict> {
    const now = this.#now();
    for (const [id, entry] of this.#batchReplays) {
      if (now - entry.at > BATCH_REPLAY_REUSE_MS) this.#batchReplays.delete(id);
    }
    let entry = this.#batchReplays.get(batch.id);
    if (!entry) {
      const once = async () =>
        outcomesOfBatch(
          await call(this.#config, {
            method: 'POST',
            path: '/emails/batch',
            body: batchBody(batch.messages, this.#config.from),
            headers: { 'idempotency-key': batch.idempotencyKey, 'x-batch-validation': 'permissive' },
          }),
          batch.messages.length,
          this.#now(),
        );
      const outcomes = whileInProgress(once);
      entry = { at: now, outcomes };
      this.#batchReplays.set(batch.id, entry);
      // A replay that could not be answered is not kept: the next member asks again.
      void outcomes.then((all) => {
        if (all.every((o) => o.kind !== 'accepted' && o.kind !== 'rejected'))
          this.#batchReplays.delete(batch.id);
      });
    }
    return entry.outcomes.then((all) => {
      const outcome = all[batch.index] ?? { kind: 'ambiguous', code: 'resend_batch_unmapped' };
      return verdictOf(outcome, `batch ${batch.id} replayed under its idempotency key`);
    });
  }

  /** `GET /emails`, newest first, until the listing is older than the attempt (or the page bound). */
  async #list(query: LookupQuery): Promise<LookupVerdict> {
    const from = query.attemptStartedAt - CLOCK_SKEW_MS;
    const until = query.attemptEndedAt + CLOCK_SKEW_MS;
    const matches: string[] = [];
    let after: string | undefined;
    for (let page = 0; page < LIST_MAX_PAGES; page++) {
      const answer = await call(this.#config, {
        method: 'GET',
        path: `/emails?limit=${LIST_PAGE_SIZE}${after ? `&after=${encodeURIComponent(after)}` : ''}`,
      });
      if (answer.kind === 'failed') return { kind: 'undecidable', detail: 'resend listing: no answer' };
      if (answer.status !== 200) {
        return { kind: 'undecidable', detail: `resend listing answered ${answer.status}` };
      }
      const body = (answer.body ?? {}) as { data?: unknown; has_more?: unknown };
      const items = Array.isArray(body.data) ? (body.data as Record<string, unknown>[]) : [];
      let older = false;
      for (const item of items) {
        const created = parseCreatedAt(item.created_at);
        if (created === undefined) continue;
        if (created < from) {
          older = true;
          continue;
        }
        const to = Array.isArray(item.to) ? item.to.map((t) => String(t).toLowerCase()) : [];
        if (
          created <= until &&
          to.includes(query.destination.toLowerCase()) &&
          item.subject === query.content
        ) {
          const id = emailIdOf(item);
          if (id) matches.push(id);
        }
      }
      const last = items.at(-1);
      if (older || body.has_more !== true || !last) {
        if (matches.length === 1) {
          return {
            kind: 'found',
            receiptId: matches[0] as string,
            detail: 'matched by recipient, subject and time',
          };
        }
        if (matches.length > 1) {
          return {
            kind: 'undecidable',
            detail: `${matches.length} emails match recipient, subject and time`,
          };
        }
        return { kind: 'absent', detail: 'no matching email in a complete listing' };
      }
      after = emailIdOf(last);
      if (!after) break;
    }
    return { kind: 'undecidable', detail: `no match within ${LIST_MAX_PAGES} pages of the listing` };
  }
}

const IN_PROGRESS_TRIES = 4;
const IN_PROGRESS_WAIT_MS = 500;

/**
 * A replay that meets `409 concurrent_idempotent_requests` (the first request under the key is
 * still being answered: a slow accept) is asked again a few times, half a second apart; then
 * the lookup gives up for this run (`undecidable`).
 */
async function whileInProgress<T extends ProviderOutcome | ProviderOutcome[]>(
  ask: () => Promise<T>,
): Promise<T> {
  let answer = await ask();
  for (let i = 1; i < IN_PROGRESS_TRIES && inProgress(answer); i++) {
    await new Promise((resolve) => setTimeout(resolve, IN_PROGRESS_WAIT_MS));
    answer = await ask();
  }
  return answer;
}

function inProgress(answer: ProviderOutcome | ProviderOutcome[]): boolean {
  const first = Array.isArray(answer) ? answer[0] : answer;
  return first?.kind === 'retryable' && first.code.endsWith('concurrent_idempotent_requests');
}

/** `2023-04-03 22:13:42.674981+00` (Resend's listing) or ISO 8601 → epoch ms. */
function parseCreatedAt(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const iso = value
    .replace(' ', 'T')
    .replace(/\.(\d{3})\d*/, '.$1')
    .replace(/\+00$/, 'Z');
  const at = Date.parse(iso);
  return Number.isNaN(at) ? undefined : at;
}

/** A replay's answer as what it proves about the original attempt. */
function verdictOf(outcome: ProviderOutcome, how: string): LookupVerdict {
  switch (outcome.kind) {
    case 'accepted':
      return { kind: 'found', receiptId: outcome.receiptId, detail: how };
    case 'rejected':
      // The provider refuses this very email: it never created it, and never will as it is.
      return outcome.permanent
        ? { kind: 'absent', detail: `${how}: refused (${outcome.code})` }
        : { kind: 'undecidable', detail: `${how}: ${outcome.code}` };
    default:
      return { kind: 'undecidable', detail: `${how}: ${outcome.code}` };
  }
}

/** The lookup facet: the reconciler's question about an ambiguous attempt. */
export const facet: LookupFacet = (context) => new ResendProviderLookup(resendConfigOf(context));
