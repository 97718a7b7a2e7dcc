import { MissingConfigurationError } from '../domain/errors.ts';
import {
  DEFAULT_OPERATOR_HOLD_MS,
  decideClaim,
  type Intent,
  planOutcome,
  planTransition,
  type TransitionPlan,
} from '../domain/intent.ts';
import type { ProviderOutcome } from '../domain/outcome.ts';
import { priorityOf } from '../domain/priority.ts';
import { Reason } from '../domain/state-machine.ts';
import { isSuppressed, SuppressionAction, SuppressionSource } from '../domain/suppression.ts';
import type { TemplateDefinition } from '../domain/template.ts';
import { EnvelopeUnreadableError, type SendEnvelope } from '../ports/envelope-sealer.port.ts';
import type { IntentRef } from '../ports/intent-queue.port.ts';
import type { EmailMessage, EmailTransport, SmsMessage, SmsTransport } from '../ports/transport.port.ts';
import type { SenderDependencies } from './dependencies.ts';
import { type EscalationOutcome, publishEscalation } from './escalate.ts';
import { outgoingMessage } from './outgoing-message.ts';

/** What one queue message led to; safe to log (no destination, no content). */
export type DeliveryResult =
  | { readonly kind: 'missing' }
  | { readonly kind: 'left'; readonly why: string; readonly state: string }
  /** The channel's provider asked everyone to wait; the message comes back then. */
  | { readonly kind: 'deferred'; readonly untilMs: number }
  | {
      readonly kind: 'recorded';
      readonly state: string;
      readonly reason: string;
      readonly attempt: number;
      readonly outcome?: string;
      /** Set when the step failed the row with an escalating reason. */
      readonly escalation?: Exclude<EscalationOutcome, 'none'>;
    };

/** How long a "slow down" without advice (a provider that sends no Retry-After) holds the channel. */
const DEFAULT_THROTTLE_HOLD_MS = 1000;

interface FollowedUp {
  readonly row: Intent;
  readonly escalation: EscalationOutcome;
}

async function applyAndFollowUp(
  plan: TransitionPlan,
  deps: SenderDependencies,
): Promise<FollowedUp | undefined> {
  const result = await deps.store.apply(plan);
  if (result.kind === 'stale') return undefined;
  const row = result.intent;
  if (row.state === 'retry_scheduled' && row.nextAttemptAt !== undefined) {
    try {
      await deps.scheduler.scheduleAttempt(row, row.attempts + 1, row.nextAttemptAt);
    } catch {
      // The row is due at nextAttemptAt + lease in the open index: the reconciler re-enqueues it.
    }
  }
  return { row, escalation: await publishEscalation(row, deps) };
}

function recorded(plan: TransitionPlan, followed: FollowedUp, outcome?: ProviderOutcome): DeliveryResult {
  return {
    kind: 'recorded',
    state: plan.next.state,
    reason: plan.record.reason,
    attempt: plan.next.attempts,
    ...(outcome ? { outcome: outcome.kind } : {}),
    ...(followed.escalation !== 'none' ? { escalation: followed.escalation } : {}),
  };
}

async function applyOrLeave(
  plan: TransitionPlan,
  row: Intent,
  deps: SenderDependencies,
): Promise<DeliveryResult> {
  const followed = await applyAndFollowUp(plan, deps);
  return followed ? recorded(plan, followed) : { kind: 'left', why: 'raced', state: row.state };
}

/**
 * If our lease expired while we waited on the provider, the reconciler may have moved the
 * row to `unknown` for this very attempt. What we learned still counts: record it from there
 * (`unknown → accepted / retry_scheduled / failed`), so the reconciler need not ask.
 */
function planLateOutcome(
  current: Intent,
  attempt: number,
  outcome: ProviderOutcome,
  deps: SenderDependencies,
  provider: string,
) {
  if (current.state !== 'unknown' || current.attempts !== attempt || outcome.kind === 'ambiguous')
    return undefined;
  // planOutcome is written for rows in `sending`; from `unknown` the same targets are legal.
  return planOutcome({ ...current, state: 'unknown' }, outcome, {
    now: deps.clock.now(),
    provider,
    policy: deps.retryPolicy,
    random: deps.random,
    timing: deps.timing,
    operatorHoldMs: deps.operatorHoldMs,
  });
}

type ChannelTransport = EmailTransport | SmsTransport;

/**
 * What this deployment needs to send the row at all: its template version and the channel's
 * transport. Checked before the claim, so a missing one fails the row as `configuration_error`
 * (escalated: a person must fix the deployment) without pretending an attempt was made.
 */
function sendingSetup(
  row: Intent,
  deps: SenderDependencies,
): { template: TemplateDefinition; transport: ChannelTransport } | MissingConfigurationError {
  const template = deps.catalog.lookup(row.templateId, row.templateVersion);
  if (!template) {
    return new MissingConfigurationError(
      'template',
      `template ${row.templateId} ${row.templateVersion} is not in this deployment's catalog`,
    );
  }
  const transport = deps.transports[row.channel];
  if (!transport)
    return new MissingConfigurationError('transport', `no ${row.channel} transport is configured`);
  return { template, transport };
}

/**
 * The sender. Primary course:
 *  1. read the row (consistent); anything but reserved / due retry_scheduled → leave it;
 *  2. suppression check → `suppressed` (never reaches a transport);
 *  3. claim with a lease and the provider about to be called (one conditional write; losers leave);
 *  4. open the envelope, render, make one provider call with a timeout;
 *  5. record the typed outcome with one conditional write; schedule the next attempt or escalate.
 * Throws only when the ledger itself cannot be read or written, so the message is redelivered.
 */
export async function deliverIntent(ref: IntentRef, deps: SenderDependencies): Promise<DeliveryResult> {
  const row = await deps.store.get(ref.noticeId, ref.channel);
  if (!row) return { kind: 'missing' };
  const now = deps.clock.now();
  const claim = decideClaim(row, { now, workerId: deps.workerId, timing: deps.timing });
  if (claim.kind === 'leave') {
    if (claim.why === 'past_deadline') {
      const plan = planTransition(
        row,
        { to: 'failed', reason: Reason.deadlineExceeded, at: now },
        deps.timing,
      );
      return applyOrLeave(plan, row, deps);
    }
    return { kind: 'left', why: claim.why, state: row.state };
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
    return applyOrLeave(plan, row, deps);
  }

  const setup = sendingSetup(row, deps);
  if (setup instanceof MissingConfigurationError) {
    const plan = planTransition(
      row,
      { to: 'failed', reason: Reason.configurationError, at: now, detail: setup.message },
      deps.timing,
    );
    return applyOrLeave(plan, row, deps);
  }
  const { template, transport } = setup;

  // The provider's own list, where it keeps one, before any work: a listed destination never
  // reaches the transport, and the answer is recorded on the row (on the claim, or as the reason).
  let checked: ProviderListCheck = { kind: 'not_asked' };
  if (transport.suppressions?.check) {
    checked = await checkProviderList(row, transport, deps);
    if (checked.kind === 'suppressed') return recordProviderSuppression(row, transport, checked, deps);
    if (checked.kind === 'unavailable') {
      const untilMs = deps.clock.now() + PROVIDER_CHECK_RETRY_MS;
      await deps.queue.enqueue([ref], { delayMs: PROVIDER_CHECK_RETRY_MS });
      return { kind: 'deferred', untilMs };
    }
  }

  if (deps.gate) {
    const admission = await deps.gate.admit(ref.channel, priorityOf(row));
    if (admission.kind === 'wait') {
      await deps.queue.enqueue([ref], { delayMs: Math.max(0, admission.untilMs - deps.clock.now()) });
      return { kind: 'deferred', untilMs: admission.untilMs };
    }
  }

  // Re-planned after the admission wait so the lease starts when the claim is written.
  const fresh = decideClaim(row, {
    now: deps.clock.now(),
    workerId: deps.workerId,
    timing: deps.timing,
    provider: transport.provider,
    detail: checked.kind === 'clear' ? `${transport.provider} suppression list: not listed` : undefined,
  });
  if (fresh.kind === 'leave') return { kind: 'left', why: fresh.why, state: row.state };
  const claimed = await deps.store.apply(fresh.plan);
  if (claimed.kind === 'stale')
    return { kind: 'left', why: 'claimed_elsewhere', state: claimed.current?.state ?? 'missing' };
  const sending = claimed.intent;
  const attempt = sending.attempts;

  let send: () => Promise<ProviderOutcome>;
  try {
    send = await prepareSend(
      sending,
      template,
      transport,
      deps,
      checked.kind === 'clear' ? checked.envelope : undefined,
    );
  } catch (error) {
    const reason = error instanceof EnvelopeUnreadableError ? Reason.envelopeUnreadable : Reason.renderFailed;
    const plan = planTransition(
      sending,
      {
        to: 'failed',
        reason,
        at: deps.clock.now(),
        attempt,
        detail: error instanceof Error ? error.name : 'error',
      },
      deps.timing,
    );
    const followed = await applyAndFollowUp(plan, deps);
    return followed ? recorded(plan, followed) : { kind: 'left', why: 'outcome_raced', state: sending.state };
  }

  const outcome = await send();
  if (outcome.kind === 'retryable' && outcome.throttled) {
    await deps.gate
      ?.throttled(ref.channel, deps.clock.now() + (outcome.retryAfterMs ?? DEFAULT_THROTTLE_HOLD_MS))
      .catch(() => undefined);
  } else if (outcome.kind === 'operator_action_required') {
    // Every message of the channel would meet the same answer: hold them all, not just this one.
    const holdMs = outcome.retryAfterMs ?? deps.operatorHoldMs ?? DEFAULT_OPERATOR_HOLD_MS;
    await deps.gate?.hold(ref.channel, deps.clock.now() + holdMs, outcome.code).catch(() => undefined);
  } else if (outcome.kind === 'accepted') {
    deps.gate?.accepted(ref.channel);
  }
  if (outcome.kind === 'rejected' && outcome.suppress) {
    // The provider's own opt-out list holds the destination: ours records it too, with the
    // provider as the source, so no later notice is even tried. Best effort: the next send to
    // the destination meets the same refusal and records it then.
    await deps.store
      .appendSuppression(
        { channel: row.channel, fingerprint: row.destination.fingerprint, masked: row.destination.masked },
        {
          action: SuppressionAction.suppress,
          reason: outcome.suppress.reason,
          source: SuppressionSource.provider,
          actor: transport.provider,
          at: deps.clock.now(),
          code: outcome.code,
        },
      )
      .catch(() => undefined);
  }
  const plan = planOutcome(sending, outcome, {
    now: deps.clock.now(),
    provider: transport.provider,
    policy: deps.retryPolicy,
    random: deps.random,
    timing: deps.timing,
    operatorHoldMs: deps.operatorHoldMs,
  });
  const followed = await applyAndFollowUp(plan, deps);
  if (followed) return recorded(plan, followed, outcome);

  const current = await deps.store.get(ref.noticeId, ref.channel);
  const late = current && planLateOutcome(current, attempt, outcome, deps, transport.provider);
  const lateFollowed = late && (await applyAndFollowUp(late, deps));
  if (late && lateFollowed) return recorded(late, lateFollowed, outcome);
  return { kind: 'left', why: 'outcome_raced', state: current?.state ?? 'missing' };
}

/**
 * Opens the envelope and renders; throws (→ `failed`) when either cannot be done. Returns the
 * one provider call of this attempt.
 */
async function prepareSend(
  row: Intent,
  template: TemplateDefinition,
  transport: ChannelTransport,
  deps: SenderDependencies,
  opened?: SendEnvelope,
): Promise<() => Promise<ProviderOutcome>> {
  if (!row.envelope) throw new EnvelopeUnreadableError('envelope already removed');
  const envelope =
    opened ?? (await deps.sealer.open(row.envelope, { noticeId: row.noticeId, channel: row.channel }));
  const message = outgoingMessage(row, template, envelope);
  if (row.channel === 'email') return () => (transport as EmailTransport).send(message as EmailMessage);
  return () => (transport as SmsTransport).send(message as SmsMessage);
}

/** How soon a send whose provider-list check could not be made is tried again. */
const PROVIDER_CHECK_RETRY_MS = 30_000;

type ProviderListCheck =
  | { readonly kind: 'not_asked' }
  /** Not listed; the envelope opened for the check is reused for the send. */
  | { readonly kind: 'clear'; readonly envelope: SendEnvelope }
  | { readonly kind: 'suppressed'; readonly code: string }
  | { readonly kind: 'unavailable' };

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
  if (answer.kind === 'unavailable') return { kind: 'unavailable' };
  return { kind: 'clear', envelope };
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
