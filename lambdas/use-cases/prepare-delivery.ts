import { decideClaim } from '../domain/attempt.ts';
import { failoverTarget, providerForAttempt } from '../domain/failover.ts';
import { deferredDueAt, type Intent } from '../domain/intent.ts';
import { Reason } from '../domain/state-machine.ts';
import { isSuppressed, SuppressionAction, SuppressionSource } from '../domain/suppression.ts';
import type { TemplateDefinition } from '../domain/template.ts';
import { planTransition } from '../domain/transition.ts';
import { checkRetryAt, planDeadlineExceeded, planWait, waitDueAt } from '../domain/waits.ts';
import type { SendEnvelope } from '../ports/envelope-sealer.port.ts';
import { type IntentRef, laneRef } from '../ports/intent-queue.port.ts';
import type { EmailTransport, SmsTransport } from '../ports/transport.port.ts';
import type { SenderDependencies } from './dependencies.ts';
import { applyOrLeave, type DeliveryResult } from './record-step.ts';

export type ChannelTransport = EmailTransport | SmsTransport;

/** A row this worker may send now: claimable, not suppressed, and the deployment can send it. */
export interface ReadyToSend {
  readonly row: Intent;
  readonly template: TemplateDefinition;
  readonly transport: ChannelTransport;
  /**
   * The channel's fallback provider, when `transport` is the primary and the channel has one: an
   * outcome that proves the primary does not hold the message sends the next attempt there.
   */
  readonly failoverTo?: string | undefined;
  /** On the claim record: what the provider's own suppression list answered, when it was asked. */
  readonly claimDetail?: string | undefined;
  /** The envelope, when the provider-list check already opened it (reused for the send). */
  readonly envelope?: SendEnvelope | undefined;
}

export type Prepared =
  | { readonly kind: 'done'; readonly result: DeliveryResult }
  | ({ readonly kind: 'ready' } & ReadyToSend);

type SendingSetup =
  | {
      readonly kind: 'ready';
      readonly template: TemplateDefinition;
      readonly transport: ChannelTransport;
      readonly failoverTo: string | undefined;
    }
  | {
      readonly kind: 'cannot_send';
      readonly reason: typeof Reason.configurationError | typeof Reason.providerNotConfigured;
      readonly detail: string;
    };

/**
 * What this deployment needs to send the row at all: its template version, and the channel's
 * transport — which needs its provider's credentials. Checked before the claim, so a missing one
 * fails the row (escalated: a person must fix the deployment) without pretending an attempt was
 * made: `configuration_error` for a template or transport the deployment lacks,
 * `provider_not_configured` for a provider whose secret still holds its placeholders.
 */
function sendingSetup(row: Intent, deps: SenderDependencies): SendingSetup {
  const template = deps.catalog.lookup(row.templateId, row.templateVersion);
  if (!template) {
    return {
      kind: 'cannot_send',
      reason: Reason.configurationError,
      detail: `template ${row.templateId} ${row.templateVersion} is not in this deployment's catalog`,
    };
  }
  const unconfigured = deps.unconfiguredProviders?.[row.channel];
  if (unconfigured) {
    return { kind: 'cannot_send', reason: Reason.providerNotConfigured, detail: unconfigured.detail };
  }
  const primary = deps.transports[row.channel];
  if (!primary) {
    return {
      kind: 'cannot_send',
      reason: Reason.configurationError,
      detail: `no ${row.channel} transport is configured`,
    };
  }
  // Provider failover (lambdas/domain/failover.ts): the row's attempt goes to the primary unless
  // it failed over before.
  const fallback = deps.fallbackTransports?.[row.channel];
  const route = { primary: primary.provider, fallback: fallback?.provider };
  const transport = fallback && providerForAttempt(row, route) === fallback.provider ? fallback : primary;
  return { kind: 'ready', template, transport, failoverTo: failoverTarget(transport.provider, route) };
}

/**
 * The sender's steps before any provider call, per row: read it; anything but reserved / due
 * retry_scheduled is left alone, a past deadline fails it (saying what it waited on), a
 * suppressed destination ends it (our list, then the provider's own where it keeps one; a check
 * the provider cannot answer makes it wait, recorded and backing off), a missing template or
 * transport fails it (configuration_error), a provider without its credentials too
 * (provider_not_configured). What remains is ready for a provider call (./provider-call.ts).
 */
export async function prepareDelivery(ref: IntentRef, deps: SenderDependencies): Promise<Prepared> {
  const done = (result: DeliveryResult) => ({ kind: 'done' as const, result });
  const row = await deps.store.get(ref.noticeId, ref.channel);
  if (!row) return done({ kind: 'missing' });
  const now = deps.clock.now();
  const claim = decideClaim(row, { now, workerId: deps.workerId, timing: deps.timing });
  if (claim.kind === 'leave') {
    if (claim.why === 'past_deadline') {
      return done(await applyOrLeave(planDeadlineExceeded(row, now, deps.timing), row, deps));
    }
    return done({ kind: 'left', why: claim.why, state: row.state });
  }

  const suppression = await deps.store.getSuppression(row.channel, row.destination.fingerprint);
  if (suppression && isSuppressed(suppression)) {
    const plan = planTransition(
      row,
      {
        to: row.state === 'reserved' ? 'suppressed' : 'failed',
        reason: Reason.onSuppressionList,
        at: now,
        detail: suppression.latest.reason,
      },
      deps.timing,
    );
    return done(await applyOrLeave(plan, row, deps));
  }

  const setup = sendingSetup(row, deps);
  if (setup.kind === 'cannot_send') {
    const plan = planTransition(
      row,
      { to: 'failed', reason: setup.reason, at: now, detail: setup.detail },
      deps.timing,
    );
    return done(await applyOrLeave(plan, row, deps));
  }

  // The provider's own list, where it keeps one, before any work: a listed destination never
  // reaches the transport, and the answer is recorded on the row (on the claim, or as the reason).
  const { template, transport, failoverTo } = setup;
  const ready = { template, transport, failoverTo };
  if (transport.suppressions?.check) {
    const checked = await checkProviderList(row, transport, deps);
    if (checked.kind === 'suppressed')
      return done(await recordProviderSuppression(row, transport, checked, deps));
    if (checked.kind === 'unavailable')
      return done(await waitForProviderCheck(row, transport.provider, checked.code, deps));
    if (checked.kind === 'clear') {
      return {
        kind: 'ready',
        row,
        ...ready,
        claimDetail: `${transport.provider} suppression list: not listed`,
        envelope: checked.envelope,
      };
    }
  }
  return { kind: 'ready', row, ...ready };
}

type ProviderListCheck =
  | { readonly kind: 'not_asked' }
  /** Not listed; the envelope opened for the check is reused for the send. */
  | { readonly kind: 'clear'; readonly envelope: SendEnvelope }
  | { readonly kind: 'suppressed'; readonly code: string }
  | { readonly kind: 'unavailable'; readonly code: string };

/**
 * Asks the provider's own suppression list about the row's destination (the envelope is opened
 * for it; an unreadable one is left to the claim path, which fails the row as it always has).
 */
async function checkProviderList(
  row: Intent,
  transport: ChannelTransport,
  deps: SenderDependencies,
): Promise<ProviderListCheck> {
  const check = transport.suppressions?.check;
  if (!check || !row.envelope) return { kind: 'not_asked' };
  let envelope: SendEnvelope;
  try {
    envelope = await deps.sealer.open(row.envelope, { noticeId: row.noticeId, channel: row.channel });
  } catch {
    return { kind: 'not_asked' };
  }
  const answer = await check.call(transport.suppressions, envelope.destination).catch(() => ({
    kind: 'unavailable' as const,
    code: 'check_failed',
  }));
  if (answer.kind === 'suppressed') return { kind: 'suppressed', code: answer.code };
  if (answer.kind === 'unavailable') return { kind: 'unavailable', code: answer.code };
  return { kind: 'clear', envelope };
}

/**
 * The provider's check could not be answered (docs/architecture.md §4 "No silent waits"): the row
 * is never sent unchecked; it waits and asks again with the retry policy's backoff until its
 * deadline fails it (`deadline_exceeded`, escalated, saying what it waited on). The first time a
 * cause is seen in the row's state it is recorded (`provider_check_unavailable`, with the row's new
 * due time, one write); a repeat only moves the due time (`defer`), so the reconciler re-enqueues
 * the row only if the message sent back here is lost. Every wait is counted
 * (`Deferred_provider_check_unavailable`, alarmed).
 */
async function waitForProviderCheck(
  row: Intent,
  provider: string,
  code: string,
  deps: SenderDependencies,
): Promise<DeliveryResult> {
  const now = deps.clock.now();
  const retryAt = checkRetryAt(row, now, deps.retryPolicy, deps.random);
  const plan = planWait(
    row,
    { kind: 'provider_check_unavailable', provider, check: 'suppression_list', code },
    { at: now, wakeAt: retryAt },
    deps.timing,
  );
  // A row that moved meanwhile (stale, or no longer open) is found so by the message sent back.
  if (plan) await deps.store.apply(plan);
  else if (!row.escalationPending) {
    await deps.store.defer(
      row.noticeId,
      row.channel,
      row.version,
      deferredDueAt(row, waitDueAt(row, retryAt, deps.timing)),
    );
  }
  await deps.queue.enqueue([laneRef(row)], { delayMs: retryAt - now });
  return { kind: 'deferred', untilMs: retryAt, cause: 'provider_check_unavailable' };
}

/**
 * The provider lists the destination: ours records it (the provider as the source, so later
 * notices stop at our own check) and the row ends `suppressed` without an attempt.
 */
async function recordProviderSuppression(
  row: Intent,
  transport: ChannelTransport,
  checked: { readonly code: string },
  deps: SenderDependencies,
): Promise<DeliveryResult> {
  const now = deps.clock.now();
  await deps.store.appendSuppression(
    { channel: row.channel, fingerprint: row.destination.fingerprint, masked: row.destination.masked },
    {
      action: SuppressionAction.suppress,
      reason: 'provider_suppression_list',
      source: SuppressionSource.provider,
      actor: transport.provider,
      at: now,
      code: checked.code,
    },
  );
  const plan = planTransition(
    row,
    {
      to: row.state === 'reserved' ? 'suppressed' : 'failed',
      reason: Reason.onSuppressionList,
      at: now,
      detail: `${transport.provider} suppression list: ${checked.code}`,
      set: { provider: transport.provider },
    },
    deps.timing,
  );
  return applyOrLeave(plan, row, deps);
}
