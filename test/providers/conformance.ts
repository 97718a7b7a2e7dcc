/**
 * The provider conformance suite: one specification every provider module and its simulator
 * must pass, run by one small file per provider (test/providers/<id>.test.ts) that supplies a
 * kit: the module's facets built through the registry against the simulator, in this process,
 * on loopback, and the simulator's own levers (faults, reports).
 *
 * What a module must do, whatever the provider:
 *  - an accepted send answers `accepted` with the provider's receipt, one message provider-side;
 *  - a "slow down" is `retryable` and throttled, with the provider's advised delay when it gives one;
 *  - a permanent refusal is `rejected` (permanent), nothing provider-side;
 *  - a timeout after the provider accepted is `ambiguous`, and then the message is found: by the
 *    lookup where the module has one, else by the module's inbound events;
 *  - a timeout before the provider accepted is `ambiguous` too (the caller cannot tell), and then
 *    the lookup answers `absent` or `undecidable`, never `found`, with nothing provider-side;
 *  - inbound: a forged request (or an event of another source) changes nothing; a genuine one
 *    is mapped to delivered / bounced (hard bounce, suppress) / complained (complaint, suppress);
 *  - idempotent replay: where the descriptor claims an idempotency key, a replay under the same
 *    key is the original receipt and no second message; where it does not, a replay is a second
 *    message, which is why the ledger never replays an ambiguous send blindly;
 *  - null: `null` in an optional member of any answer or event reads as the member's absence
 *    (./null-fields.ts): the same outcomes, verdicts and reports, nothing unreadable.
 */
import { describe, expect, it } from 'vitest';
import type { ProviderChannel, ProviderDescriptor } from '../../lambdas/contract/providers.ts';
import { correlationId, deriveNoticeId } from '../../lambdas/domain/identity.ts';
import type { ProviderOutcome } from '../../lambdas/domain/outcome.ts';
import type { LookupVerdict } from '../../lambdas/domain/reconcile.ts';
import type { DeliveryReport, InboundVerdict, StatusAnswer } from '../../lambdas/ports/provider.port.ts';
import type { LookupQuery } from '../../lambdas/ports/provider-lookup.port.ts';
import type { ProviderSuppressionCheck } from '../../lambdas/ports/transport.port.ts';
import { absentIn, everyPath, nullsIn, type OptionalFields, type Rewrite } from './null-fields.ts';

/** The simulator's lever for the next send. */
export type NextSend =
  | { readonly kind: 'throttle'; readonly retryAfterSeconds?: number }
  | { readonly kind: 'reject' }
  | { readonly kind: 'timeout_after_accept' }
  | { readonly kind: 'timeout_before_accept' };

export type ReportKind = 'accepted' | 'delivered' | 'bounced' | 'complained';

export interface SendInput {
  readonly noticeId: string;
  readonly to: string;
  readonly content: string;
}

export interface Kit {
  readonly descriptor: ProviderDescriptor;
  readonly channel: ProviderChannel;
  /** Does the provider advise a delay when it throttles (Retry-After or equivalent)? */
  readonly advisesDelay: boolean;
  /** One send through the module's transport facet. */
  send(input: SendInput): Promise<ProviderOutcome>;
  /**
   * The module's lookup facet, when it has one (the kit adds what the reconciler would: the
   * message as sent, for a module that looks up by replaying under the key).
   */
  readonly lookup?: (query: LookupQuery) => Promise<LookupVerdict>;
  /** The module's status facet (delivery follow-up), when it has one. */
  readonly status?: (sent: SendInput, receipt: string) => Promise<StatusAnswer>;
  /** The next send meets this at the simulator. */
  next(fault: NextSend): void;
  /** What the provider holds for a destination (its receipts), read from the simulator. */
  sentTo(destination: string): Promise<string[]>;
  /** A fresh destination that ends the way `kind` says (delivered, bounced, complained). */
  destination(kind: 'delivered' | 'bounced' | 'complained'): string;
  /** The provider's own word about a message it holds, through the module's inbound facet. */
  report(sent: SendInput, receipt: string, kind: ReportKind): Promise<InboundVerdict>;
  /** The same word, forged (a wrong signature; an event of another source). */
  forged(sent: SendInput, receipt: string): Promise<InboundVerdict | 'unrouted'>;
  /**
   * The transport's question to the provider's own suppression list, where it keeps one
   * (`capabilities.suppressionSync` with a check).
   */
  readonly suppressionCheck?: (destination: string) => Promise<ProviderSuppressionCheck>;
  /**
   * The optional members of the provider's JSON answers and events, as its contract has them:
   * the null case feeds `null` in each one and requires every one to have been fed.
   */
  readonly optionalFields: OptionalFields;
  /**
   * From now on every JSON answer the module reads (through a proxy in front of the simulator)
   * and every event `report` hands it passes through `rewrite` first; `undefined`: untouched.
   */
  rewrite(rewrite: Rewrite | undefined): void;
  close(): Promise<void>;
}

let counter = 0;
function notice(): string {
  return deriveNoticeId('conformance', `${process.pid}-${counter++}-${Date.now()}`, 'recipient');
}

export function runConformance(name: string, start: () => Promise<Kit>): void {
  describe(`provider conformance: ${name}`, () => {
    const withKit = (body: (kit: Kit) => Promise<void>) => async () => {
      const kit = await start();
      try {
        await body(kit);
      } finally {
        await kit.close();
      }
    };
    const input = (kit: Kit, kind: 'delivered' | 'bounced' | 'complained' = 'delivered'): SendInput => ({
      noticeId: notice(),
      to: kit.destination(kind),
      content: 'Your lab result is ready.',
    });
    const reportOf = (verdict: InboundVerdict): DeliveryReport | undefined =>
      verdict.kind === 'accepted' ? verdict.reports[0] : undefined;

    it(
      'accepts a send with the provider’s receipt, one message provider-side',
      withKit(async (kit) => {
        const sent = input(kit);
        const outcome = await kit.send(sent);
        expect(outcome.kind).toBe('accepted');
        const receipt = outcome.kind === 'accepted' ? outcome.receiptId : '';
        expect(await kit.sentTo(sent.to)).toEqual([receipt]);
      }),
    );

    it(
      'answers a "slow down" as retryable and throttled, with the advised delay',
      withKit(async (kit) => {
        const sent = input(kit);
        kit.next({ kind: 'throttle', retryAfterSeconds: 7 });
        const outcome = await kit.send(sent);
        expect(outcome).toMatchObject({ kind: 'retryable', throttled: true });
        if (outcome.kind !== 'retryable') return;
        // Exact where the provider says seconds to wait; within its clock's second where it says
        // when the window resets (an epoch second).
        if (kit.advisesDelay)
          expect(Math.abs((outcome.retryAfterMs ?? 0) - 7_000)).toBeLessThanOrEqual(1_000);
        else expect(outcome.retryAfterMs).toBeUndefined();
        expect(await kit.sentTo(sent.to)).toEqual([]);
      }),
    );

    it(
      'answers a permanent refusal as rejected, permanently, with nothing provider-side',
      withKit(async (kit) => {
        const sent = input(kit);
        kit.next({ kind: 'reject' });
        expect(await kit.send(sent)).toMatchObject({ kind: 'rejected', permanent: true });
        expect(await kit.sentTo(sent.to)).toEqual([]);
      }),
    );

    it(
      'a timeout after the provider accepted is ambiguous, then found (lookup, else its events)',
      withKit(async (kit) => {
        const sent = input(kit);
        kit.next({ kind: 'timeout_after_accept' });
        const startedAt = Date.now();
        const outcome = await kit.send(sent);
        expect(outcome).toEqual({ kind: 'ambiguous', code: 'timeout' });
        const held = await kit.sentTo(sent.to);
        expect(held).toHaveLength(1);
        if (kit.lookup) {
          const verdict = await kit.lookup({
            correlationId: correlationId({ noticeId: sent.noticeId, channel: kit.channel }),
            destination: sent.to,
            content: sent.content,
            attemptStartedAt: startedAt,
            attemptEndedAt: Date.now(),
          });
          expect(verdict).toMatchObject({ kind: 'found', receiptId: held[0] });
          // Finding it sent nothing more.
          expect(await kit.sentTo(sent.to)).toEqual(held);
        } else {
          // No lookup: the module's inbound events settle it (the provider's "I have it": its
          // acceptance event, or where it publishes none its first later word, which proves
          // acceptance too: a report settles an `unknown` row as accepted first).
          const report = reportOf(await kit.report(sent, held[0] as string, 'accepted'));
          expect(['accepted', 'delivered']).toContain(report?.kind);
          expect(report).toMatchObject({
            ref: { noticeId: sent.noticeId, channel: kit.channel },
            receiptId: held[0],
            provider: kit.descriptor.id,
          });
        }
      }),
    );

    it(
      'a timeout before the provider accepted is ambiguous, and never found without its one message',
      withKit(async (kit) => {
        const sent = input(kit);
        kit.next({ kind: 'timeout_before_accept' });
        const startedAt = Date.now();
        expect(await kit.send(sent)).toEqual({ kind: 'ambiguous', code: 'timeout' });
        expect(await kit.sentTo(sent.to)).toEqual([]);
        if (kit.lookup) {
          const verdict = await kit.lookup({
            correlationId: correlationId({ noticeId: sent.noticeId, channel: kit.channel }),
            destination: sent.to,
            content: sent.content,
            attemptStartedAt: startedAt,
            attemptEndedAt: Date.now(),
          });
          const held = await kit.sentTo(sent.to);
          if (kit.descriptor.capabilities.idempotencyKey && verdict.kind === 'found') {
            // A lookup that replays under the idempotency key is the request's first arrival
            // when the original never got there: the provider takes it now, once, and that one
            // message is what the lookup found.
            expect(held).toEqual([verdict.receiptId]);
          } else {
            expect(['absent', 'undecidable']).toContain(verdict.kind);
            expect(held).toEqual([]);
          }
        }
        expect(kit.descriptor.capabilities.lookup).toBe(kit.lookup !== undefined);
      }),
    );

    it(
      'refuses forged inbound word, and maps genuine delivered / bounced / complained',
      withKit(async (kit) => {
        const delivered = input(kit, 'delivered');
        const bounced = input(kit, 'bounced');
        const complained = input(kit, 'complained');
        const receipts: string[] = [];
        for (const sent of [delivered, bounced, complained]) {
          const outcome = await kit.send(sent);
          expect(outcome.kind).toBe('accepted');
          receipts.push(outcome.kind === 'accepted' ? outcome.receiptId : '');
        }

        const forged = await kit.forged(delivered, receipts[0] as string);
        expect(forged === 'unrouted' || forged.kind === 'refused' || forged.kind === 'malformed').toBe(true);
        if (forged !== 'unrouted' && forged.kind === 'refused') expect([401, 403]).toContain(forged.status);

        const ref = (sent: SendInput) => ({ noticeId: sent.noticeId, channel: kit.channel });
        expect(reportOf(await kit.report(delivered, receipts[0] as string, 'delivered'))).toMatchObject({
          ref: ref(delivered),
          kind: 'delivered',
          receiptId: receipts[0],
        });
        expect(reportOf(await kit.report(bounced, receipts[1] as string, 'bounced'))).toMatchObject({
          ref: ref(bounced),
          kind: 'failed',
          failure: 'hard_bounce',
          suppress: true,
        });
        expect(reportOf(await kit.report(complained, receipts[2] as string, 'complained'))).toMatchObject({
          ref: ref(complained),
          kind: 'failed',
          failure: 'complaint',
          suppress: true,
        });
      }),
    );

    it(
      'answers a status question about an accepted message where it has a status API (delivery follow-up)',
      withKit(async (kit) => {
        expect(kit.descriptor.capabilities.statusPull).toBe(kit.status !== undefined);
        if (!kit.status) return;
        const sent = input(kit);
        const outcome = await kit.send(sent);
        const receipt = outcome.kind === 'accepted' ? outcome.receiptId : '';
        let final: DeliveryReport | undefined;
        for (let i = 0; i < 100 && !final; i++) {
          const answer = await kit.status(sent, receipt);
          if (answer.kind === 'reports') final = answer.reports.find((r) => r.kind === 'delivered');
          if (!final) await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect(final).toMatchObject({
          ref: { noticeId: sent.noticeId, channel: kit.channel },
          kind: 'delivered',
          receiptId: receipt,
          provider: kit.descriptor.id,
        });
      }),
    );

    it(
      'replays under the same key only where the provider honours one',
      withKit(async (kit) => {
        const sent = input(kit);
        const first = await kit.send(sent);
        const replay = await kit.send(sent);
        expect([first.kind, replay.kind]).toEqual(['accepted', 'accepted']);
        const held = await kit.sentTo(sent.to);
        if (kit.descriptor.capabilities.idempotencyKey) {
          expect(replay).toEqual(first);
          expect(held).toHaveLength(1);
        } else {
          expect(held).toHaveLength(2);
        }
      }),
    );

    it(
      'reads null in an optional member of its answers and events as absent',
      withKit(async (kit) => {
        const fed = new Set<string>();
        const withNulls = nullsIn(kit.optionalFields, fed);
        const withoutThem = absentIn(kit.optionalFields);
        // A report's time may come from a member that is now missing (then: when it was read).
        const comparable = (verdict: InboundVerdict | StatusAnswer) =>
          JSON.parse(
            JSON.stringify(verdict, (key, value: unknown) =>
              key === 'at' ? (typeof value === 'number' ? 'a time' : value) : value,
            ),
          ) as unknown;
        kit.rewrite(withNulls);

        // Sends, and the refusals a provider answers with an error body.
        kit.next({ kind: 'throttle', retryAfterSeconds: 7 });
        expect(await kit.send(input(kit))).toMatchObject({ kind: 'retryable', throttled: true });
        kit.next({ kind: 'reject' });
        expect(await kit.send(input(kit))).toMatchObject({ kind: 'rejected', permanent: true });
        if (kit.suppressionCheck) {
          // The gateway's `{"suppressed": false, "reason": null}`: clear, not unreadable.
          expect(await kit.suppressionCheck(kit.destination('delivered'))).toEqual({ kind: 'clear' });
        }
        const sends = (['delivered', 'bounced', 'complained'] as const).map((kind) => ({
          kind,
          sent: input(kit, kind),
        }));
        const receipts: string[] = [];
        for (const { sent } of sends) {
          const outcome = await kit.send(sent);
          expect(outcome.kind).toBe('accepted');
          receipts.push(outcome.kind === 'accepted' ? outcome.receiptId : '');
        }

        // The provider's later word, with nulls and without the members: the same reports.
        const expected = {
          delivered: { kind: 'delivered' },
          bounced: { kind: 'failed', failure: 'hard_bounce', suppress: true },
          complained: { kind: 'failed', failure: 'complaint', suppress: true },
        } as const;
        for (const [i, { kind, sent }] of sends.entries()) {
          const receipt = receipts[i] as string;
          kit.rewrite(withNulls);
          const nulls = await kit.report(sent, receipt, kind);
          expect(reportOf(nulls)).toMatchObject({
            ref: { noticeId: sent.noticeId, channel: kit.channel },
            receiptId: receipt,
            ...expected[kind],
          });
          kit.rewrite(withoutThem);
          expect(comparable(nulls)).toEqual(comparable(await kit.report(sent, receipt, kind)));
        }

        if (kit.status) {
          const [{ sent }] = sends as [(typeof sends)[number]];
          kit.rewrite(withNulls);
          const nulls = await kit.status(sent, receipts[0] as string);
          expect(nulls.kind).toBe('reports');
          kit.rewrite(withoutThem);
          expect(comparable(nulls)).toEqual(comparable(await kit.status(sent, receipts[0] as string)));
        }

        if (kit.lookup) {
          kit.rewrite(withNulls);
          const sent = input(kit);
          kit.next({ kind: 'timeout_after_accept' });
          const startedAt = Date.now();
          expect(await kit.send(sent)).toEqual({ kind: 'ambiguous', code: 'timeout' });
          const [held] = await kit.sentTo(sent.to);
          const query = {
            correlationId: correlationId({ noticeId: sent.noticeId, channel: kit.channel }),
            destination: sent.to,
            content: sent.content,
            attemptStartedAt: startedAt,
            attemptEndedAt: Date.now(),
          };
          const nulls = await kit.lookup(query);
          expect(nulls, JSON.stringify(nulls)).toMatchObject({ kind: 'found', receiptId: held });
          kit.rewrite(withoutThem);
          expect(await kit.lookup(query)).toEqual(nulls);
        }

        // Every optional member the kit names was really fed a null somewhere above.
        expect([...fed].sort()).toEqual(everyPath(kit.optionalFields).sort());
      }),
    );
  });
}

/** A facet the kit needs; a module that does not offer it fails the kit at once. */
export function must<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('the module does not offer this facet');
  return value;
}
