import { ConfigError } from '../contract/config-error.ts';
import { DEFAULT_OPERATOR_HOLD_MS, decideClaim, planOutcome } from '../domain/attempt.ts';
import type { Channel } from '../domain/channel.ts';
import type { Intent } from '../domain/intent.ts';
import type { ProviderOutcome } from '../domain/outcome.ts';
import { type Priority, priorityOf } from '../domain/priority.ts';
import { Reason } from '../domain/state-machine.ts';
import { isSuppressed, SuppressionAction, SuppressionSource } from '../domain/suppression.ts';
import type { TemplateDefinition } from '../domain/template.ts';
import { planTransition, type TransitionPlan } from '../domain/transition.ts';
import { EnvelopeUnreadableError, type SendEnvelope } from '../ports/envelope-sealer.port.ts';
import { type IntentRef, laneRef } from '../ports/intent-queue.port.ts';
import type { EmailMessage, EmailTransport, SmsMessage, SmsTransport } from '../ports/transport.port.ts';
import type { SenderDependencies } from './dependencies.ts';
import { type EscalationOutcome, publishEscalation } from './escalate.ts';
import { renderMessage } from './messages.ts';

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

export async function applyAndFollowUp(
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

export type ChannelTransport = EmailTransport | SmsTransport;

/**
 * What this deployment needs to send the row at all: its template version and the channel's
 * transport. Checked before the claim, so a missing one fails the row as `configuration_error`
 * (escalated: a person must fix the deployment) without pretending an attempt was made.
 */
function sendingSetup(
  row: Intent,
  deps: SenderDependencies,
): { template: TemplateDefinition; transport: ChannelTransport } | ConfigError {
  const template = deps.catalog.lookup(row.templateId, row.templateVersion);
  if (!template) {
    return new ConfigError(
      `template ${row.templateId} ${row.templateVersion} is not in this deployment's catalog`,
    );
  }
  const transport = deps.transports[row.channel];
  if (!transport) return new ConfigError(`no ${row.channel} transport is configured`);
  return { template, transport };
}

/** A row this worker may send now: claimable, not suppressed, and the deployment can send it. */
export interface ReadyToSend {
  readonly row: Intent;
  readonly template: TemplateDefinition;
  readonly transport: ChannelTransport;
  /** On the claim record: what the provider's own suppression list answered, when it was asked. */
  readonly claimDetail?: string | undefined;
  /** The envelope, when the provider-list check already opened it (reused for the send). */
  readonly envelope?: SendEnvelope | undefined;
}

/**
 * Steps 1 and 2 of the sender (and of a batch): read the row; anything but reserved / due
 * retry_scheduled is left alone, a past deadline fails it, a suppressed destination ends it
 * (our list, then the provider's own where it keeps one), a missing template or transport fails
 * it (configuration_error). What remains is ready.
 */
export async function prepareDelivery(
  ref: IntentRef,
  deps: SenderDependencies,
): Promise<
  { readonly kind: 'done'; readonly result: DeliveryResult } | ({ readonly kind: 'ready' } & ReadyToSend)
> {
  const done = (result: DeliveryResult) => ({ kind: 'done' as const, result });
  const row = await deps.store.get(ref.noticeId, ref.channel);
  if (!row) return done({ kind: 'missing' });
  const now = deps.clock.now();
  const claim = decideClaim(row, { now, workerId: deps.workerId, timing: deps.timing });
  if (claim.kind === 'leave') {
    if (claim.why === 'past_deadline') {
      const plan = planTransition(
        row,
        { to: 'failed', reason: Reason.deadlineExceeded, at: now },
        deps.timing,
      );
      return done(await applyOrLeave(plan, row, deps));
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
  if (setup instanceof ConfigError) {
    const plan = planTransition(
      row,
      { to: 'failed', reason: Reason.configurationError, at: now, detail: setup.message },
      deps.timing,
    );
    return done(await applyOrLeave(plan, row, deps));
  }

  // The provider's own list, where it keeps one, before any work: a listed destination never
  // reaches the transport, and the answer is recorded on the row (on the claim, or as the reason).
  const { transport } = setup;
  if (transport.suppressions?.check) {
    const checked = await checkProviderList(row, transport, deps);
    if (checked.kind === 'suppressed')
      return done(await recordProviderSuppression(row, transport, checked, deps));
    if (checked.kind === 'unavailable') {
      const untilMs = deps.clock.now() + PROVIDER_CHECK_RETRY_MS;
      await deps.queue.enqueue([ref], { delayMs: PROVIDER_CHECK_RETRY_MS });
      return done({ kind: 'deferred', untilMs });
    }
    if (checked.kind === 'clear') {
      return {
        kind: 'ready',
        row,
        ...setup,
        claimDetail: `${transport.provider} suppression list: not listed`,
        envelope: checked.envelope,
      };
    }
  }
  return { kind: 'ready', row, ...setup };
}

/**
 * The channel's shared gate, asked once per provider call: `undefined` to go ahead, else the
 * refs are sent back through the queue for when the gate opens, and each is `deferred`.
 */
export async function admitCall(
  channel: Channel,
  refs: readonly IntentRef[],
  deps: SenderDependencies,
  priority?: Priority,
): Promise<DeliveryResult | undefined> {
  if (!deps.gate) return undefined;
  // The lane books its token in the shared rate budget (docs/architecture.md §11).
  const admission = await deps.gate.admit(channel, priority);
  if (admission.kind === 'go') return undefined;
  await deps.queue.enqueue(refs, { delayMs: Math.max(0, admission.untilMs - deps.clock.now()) });
  return { kind: 'deferred', untilMs: admission.untilMs };
}

/**
 * Opens the envelope (unless the provider-list check already did) and renders the message;
 * throws (→ `failPreparation`) when either cannot be done.
 */
export async function openMessage(
  row: Intent,
  template: TemplateDefinition,
  deps: Pick<SenderDependencies, 'sealer'>,
  opened?: SendEnvelope,
): Promise<EmailMessage | SmsMessage> {
  if (!row.envelope) throw new EnvelopeUnreadableError('envelope already removed');
  const envelope =
    opened ?? (await deps.sealer.open(row.envelope, { noticeId: row.noticeId, channel: row.channel }));
  return renderMessage(row, template, envelope);
}

/** A claimed row whose envelope or rendering failed: `failed` without a provider call. */
export async function failPreparation(
  sending: Intent,
  error: unknown,
  deps: SenderDependencies,
): Promise<DeliveryResult> {
  const reason = error instanceof EnvelopeUnreadableError ? Reason.envelopeUnreadable : Reason.renderFailed;
  const plan = planTransition(
    sending,
    {
      to: 'failed',
      reason,
      at: deps.clock.now(),
      attempt: sending.attempts,
      detail: error instanceof Error ? error.name : 'error',
    },
    deps.timing,
  );
  const followed = await applyAndFollowUp(plan, deps);
  return followed ? recorded(plan, followed) : { kind: 'left', why: 'outcome_raced', state: sending.state };
}

/**
 * What one provider call's answer means for the whole channel, once per call (a batch's 429 is
 * one "slow down", not a hundred): a throttle closes the shared gate and slows the pace, an
 * acceptance brings the pace back up, `operator_action_required` holds the channel for a person
 * (every message of the channel would meet the same answer; the rows escalate durably).
 */
export async function reactToOutcomes(
  channel: Channel,
  outcomes: readonly ProviderOutcome[],
  deps: SenderDependencies,
): Promise<void> {
  const now = deps.clock.now();
  const throttled = outcomes.filter(
    (o): o is Extract<ProviderOutcome, { kind: 'retryable' }> => o.kind === 'retryable' && o.throttled,
  );
  if (throttled.length > 0) {
    const advice = Math.max(...throttled.map((o) => o.retryAfterMs ?? DEFAULT_THROTTLE_HOLD_MS));
    await deps.gate?.throttled(channel, now + advice).catch(() => undefined);
  }
  if (outcomes.some((o) => o.kind === 'accepted')) deps.gate?.accepted(channel);
  const held = outcomes.find(
    (o): o is Extract<ProviderOutcome, { kind: 'operator_action_required' }> =>
      o.kind === 'operator_action_required',
  );
  if (held) {
    const holdMs = held.retryAfterMs ?? deps.operatorHoldMs ?? DEFAULT_OPERATOR_HOLD_MS;
    await deps.gate?.hold(channel, now + holdMs, held.code).catch(() => undefined);
  }
}

/**
 * Step 5: the attempt's typed outcome as one conditional write; the next attempt scheduled or
 * the escalation published. If our lease expired meanwhile and the reconciler turned the row
 * into `unknown` for this very attempt, what we learned still counts (`planLateOutcome`).
 */
export async function recordOutcome(
  sending: Intent,
  outcome: ProviderOutcome,
  provider: string,
  deps: SenderDependencies,
): Promise<DeliveryResult> {
  const attempt = sending.attempts;
  if (outcome.kind === 'rejected' && outcome.suppress) {
    // The provider's own opt-out list holds the destination: ours records it too, with the
    // provider as the source, so no later notice is even tried. Best effort: the next send to
    // the destination meets the same refusal and records it then.
    await deps.store
      .appendSuppression(
        {
          channel: sending.channel,
          fingerprint: sending.destination.fingerprint,
          masked: sending.destination.masked,
        },
        {
          action: SuppressionAction.suppress,
          reason: outcome.suppress.reason,
          source: SuppressionSource.provider,
          actor: provider,
          at: deps.clock.now(),
          code: outcome.code,
        },
      )
      .catch(() => undefined);
  }
  const plan = planOutcome(sending, outcome, {
    now: deps.clock.now(),
    provider,
    policy: deps.retryPolicy,
    random: deps.random,
    timing: deps.timing,
    operatorHoldMs: deps.operatorHoldMs,
  });
  const followed = await applyAndFollowUp(plan, deps);
  if (followed) return recorded(plan, followed, outcome);

  const current = await deps.store.get(sending.noticeId, sending.channel);
  const late = current && planLateOutcome(current, attempt, outcome, deps, provider);
  const lateFollowed = late && (await applyAndFollowUp(late, deps));
  if (late && lateFollowed) return recorded(late, lateFollowed, outcome);
  return { kind: 'left', why: 'outcome_raced', state: current?.state ?? 'missing' };
}

/**
 * The sender. Primary course:
 *  1. read the row (consistent); anything but reserved / due retry_scheduled → leave it;
 *  2. suppression check, ours then the provider's own list → `suppressed` (never reaches a
 *     transport);
 *  3. claim with a lease and the provider about to be called (one conditional write; losers leave);
 *  4. open the envelope, render, make one provider call with a timeout;
 *  5. record the typed outcome with one conditional write; schedule the next attempt or escalate.
 * Throws only when the ledger itself cannot be read or written, so the message is redelivered.
 */
export async function deliverIntent(ref: IntentRef, deps: SenderDependencies): Promise<DeliveryResult> {
  const prepared = await prepareDelivery(ref, deps);
  if (prepared.kind === 'done') return prepared.result;
  return deliverReady(prepared, deps);
}

/** Steps 3 to 5 for one row that is ready to send. */
export async function deliverReady(ready: ReadyToSend, deps: SenderDependencies): Promise<DeliveryResult> {
  const { row, template, transport } = ready;
  // A deferral goes back to the row's lane (docs/architecture.md §11).
  const deferred = await admitCall(row.channel, [laneRef(row)], deps, priorityOf(row));
  if (deferred) return deferred;

  // Re-planned after the admission wait so the lease starts when the claim is written.
  const fresh = decideClaim(row, {
    now: deps.clock.now(),
    workerId: deps.workerId,
    timing: deps.timing,
    provider: transport.provider,
    detail: ready.claimDetail,
  });
  if (fresh.kind === 'leave') return { kind: 'left', why: fresh.why, state: row.state };
  const claimed = await deps.store.apply(fresh.plan);
  if (claimed.kind === 'stale')
    return { kind: 'left', why: 'claimed_elsewhere', state: claimed.current?.state ?? 'missing' };
  const sending = claimed.intent;

  let message: EmailMessage | SmsMessage;
  try {
    message = await openMessage(sending, template, deps, ready.envelope);
  } catch (error) {
    return failPreparation(sending, error, deps);
  }
  const outcome =
    'body' in message
      ? await (transport as SmsTransport).send(message)
      : await (transport as EmailTransport).send(message);
  await reactToOutcomes(row.channel, [outcome], deps);
  return recordOutcome(sending, outcome, transport.provider, deps);
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
