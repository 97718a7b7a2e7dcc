import { type Caller, canSee } from '../domain/caller.ts';
import type { Channel } from '../domain/channel.ts';
import { type DifferingPart, differingParts } from '../domain/content-parts.ts';
import { type ResolvedDestination, resolveDestination } from '../domain/destination.ts';
import { InvalidDestinationError } from '../domain/errors.ts';
import { withFallback } from '../domain/fallback.ts';
import { containsContactData, deriveNoticeId, variableDigests } from '../domain/identity.ts';
import { createIntent, type Intent, type SmsShape, watchedAtIntake } from '../domain/intent.ts';
import { DEFAULT_PRIORITY } from '../domain/priority.ts';
import { applySendWindow } from '../domain/send-window.ts';
import { smsShape } from '../domain/sms-shape.ts';
import type { IntentState } from '../domain/state-machine.ts';
import type { TemplateDefinition } from '../domain/template.ts';
import { renderEmail, renderSms } from '../domain/template-render.ts';
import { checkVariables } from '../domain/template-variables.ts';
import { type IntentRef, laneRef } from '../ports/intent-queue.port.ts';
import {
  type DeadlineRiskDependencies,
  estimateAtIntake,
  type IntakeEstimate,
  publishWarning,
} from './deadline-risk.ts';
import type { IntakeDependencies } from './dependencies.ts';
import {
  channelDigest,
  effectiveFallback,
  fallbackViolations,
  rawDestination,
  sealFallback,
  windowAtIntake,
} from './intake-policies.ts';
import type { NoticeRequest, Violation } from './notice-request.ts';

export type { NoticeRequest, Violation } from './notice-request.ts';

export type ChannelOutcome = 'created' | 'duplicate' | 'conflict';

export interface ChannelResult {
  readonly channel: Channel;
  readonly state: IntentState;
  readonly outcome: ChannelOutcome;
  /** On a conflict: which parts of the request differ from the recorded intent (paths, no values). */
  readonly differs?: readonly DifferingPart[];
  /** Created channels of a channel with a known rate: when it will likely be sent (epoch ms). */
  readonly estimatedSendAt?: number;
  /** The estimate passes the deadline: the row carries a deadline_at_risk warning. */
  readonly deadlineAtRisk?: boolean;
  /** Held for its send window: not enqueued now, sent when the window opens (`estimatedSendAt`). */
  readonly heldForSendWindow?: boolean;
}

export type SubmitResult =
  /** Semantically invalid (unknown template, variables, deadline): nothing was written. */
  | { readonly kind: 'invalid'; readonly violations: readonly Violation[] }
  /** `created` when at least one channel was newly recorded; otherwise an exact replay. */
  | {
      readonly kind: 'recorded';
      readonly noticeId: string;
      readonly created: boolean;
      readonly channels: readonly ChannelResult[];
    }
  /** At least one channel was already recorded with different content; that row is unchanged. */
  | { readonly kind: 'conflict'; readonly noticeId: string; readonly channels: readonly ChannelResult[] }
  /**
   * The notice id is another submitter's (a channel of it is recorded and not the caller's to
   * see): nothing was written, and nothing of the recorded notice is told.
   */
  | { readonly kind: 'taken'; readonly noticeId: string };

interface PreparedChannel {
  readonly channel: Channel;
  readonly intent: Intent;
  readonly estimate: IntakeEstimate;
}

/** A deadline further out keeps personal data (the sealed envelope) alive for too long. */
export const MAX_DEADLINE_MS = 30 * 86_400_000;

function validate(
  request: NoticeRequest,
  now: number,
  template: TemplateDefinition | undefined,
  configuredChannels: readonly Channel[],
): Violation[] {
  const violations: Violation[] = [];
  for (const channel of request.channels) {
    if (!configuredChannels.includes(channel)) {
      violations.push({
        path: 'channels',
        code: 'channel_not_configured',
        message: `this deployment does not send ${channel}: its provider is none`,
      });
    }
  }
  const identifiers = [
    { path: 'eventId', value: request.eventId },
    { path: 'recipient.id', value: request.recipient.id },
  ];
  for (const { path, value } of identifiers) {
    if (containsContactData(value)) {
      violations.push({
        path,
        code: 'contact_data_in_identifier',
        message:
          'must not contain an email address or phone number: identifiers are stored and shown as sent',
      });
    }
  }
  if (!template) {
    // The id and version are the client's own words; no need to echo them back.
    violations.push({
      path: 'template',
      code: 'unknown_template',
      message: 'no such template id and version',
    });
    return violations;
  }
  violations.push(...checkVariables(template, request.variables));
  for (const channel of request.channels) {
    if (!template[channel]) {
      violations.push({
        path: 'channels',
        code: 'channel_not_in_template',
        message: `template ${template.id} ${template.version} has no ${channel} body`,
      });
    }
  }
  if (request.deadline !== undefined && request.deadline <= now) {
    violations.push({
      path: 'deadline',
      code: 'deadline_not_in_future',
      message: 'deadline must lie in the future',
    });
  } else if (request.deadline !== undefined && request.deadline > now + MAX_DEADLINE_MS) {
    violations.push({
      path: 'deadline',
      code: 'deadline_too_far',
      message: 'deadline must lie within 30 days',
    });
  }
  return violations;
}

function resolveAll(request: NoticeRequest, deps: Pick<IntakeDependencies, 'fingerprintKey'>) {
  const resolved: { channel: Channel; destination: ResolvedDestination }[] = [];
  const violations: Violation[] = [];
  for (const channel of request.channels) {
    try {
      resolved.push({
        channel,
        destination: resolveDestination(deps.fingerprintKey, channel, rawDestination(request, channel) ?? ''),
      });
    } catch (error) {
      if (!(error instanceof InvalidDestinationError)) throw error;
      violations.push({
        path: channel === 'email' ? 'recipient.email' : 'recipient.phone',
        code: error.reason,
        message: error.message,
      });
    }
  }
  return { resolved, violations };
}

/** The rows a request names: its notice id (derived from the event) on each of its channels. */
export function requestedRows(request: NoticeRequest): IntentRef[] {
  const noticeId = deriveNoticeId(request.eventType, request.eventId, request.recipient.id);
  return request.channels.map((channel) => ({ noticeId, channel }));
}

/**
 * Sends the watch of every channel of the notice, delayed by `INDEX_WATCH_DELAY_MS`; resolves
 * to the watch once its messages are durable. A watch that could not be sent costs the rows their
 * place out of the index (they enter it at intake, as without a watch), never the notice.
 */
async function watchBeforeReserve(
  noticeId: string,
  prepared: readonly PreparedChannel[],
  deps: Pick<IntakeDependencies, 'watch'>,
): Promise<{ readonly delayMs: number } | undefined> {
  const { watch } = deps;
  if (!watch) return undefined;
  return watch.watch(prepared.map(({ channel }) => ({ noticeId, channel }))).then(
    () => watch,
    () => undefined,
  );
}

/**
 * Intake. Primary course:
 *  1. check the request against the channels this deployment sends, the template catalog, the
 *     clock and the destinations (422 material) before anything is sealed or written;
 *  2. per channel: render once (proves it renders, measures SMS segments), seal destination +
 *     variables, build the `reserved` intent;
 *  3. send each channel's watch (a delayed message: docs/table-design.md "Watched rows"), so
 *     that the rows may stay out of the open index while on the happy path;
 *  4. reserve the channels in one atomic write (created / duplicate / conflict per channel), so
 *     that of concurrent identical requests exactly one is told 202;
 *  5. enqueue a reference for each newly created channel; answer 409 if any channel conflicts.
 * A channel this request added is recorded and sent even when another channel conflicts (the
 * 409 lists per channel what happened): taking it back would race a concurrent replay that was
 * already told the row exists.
 * A crash between 4 and 5 loses nothing: the watch puts the reserved row into the open index
 * (without a watch it is there already) and the reconciler re-enqueues a reserved row that no
 * worker claimed within SEND_LEASE_MS.
 *
 * `caller` (docs/api.md "Callers"): every row this request reserves records its principal as the
 * submitter; a submitter's request that meets a channel of the notice it may not see (another
 * principal's, or one recorded before submitters were) writes nothing and answers `taken`, so a
 * replay of someone else's event neither reveals nor alters their notice. Operators replay any
 * notice. Without a caller (benchmarks, use-case tests) no submitter is recorded and no row is
 * refused: the HTTP routes always pass one.
 */
export async function submitNotice(
  request: NoticeRequest,
  deps: IntakeDependencies & DeadlineRiskDependencies,
  caller?: Caller,
): Promise<SubmitResult> {
  const now = deps.clock.now();
  const template = deps.catalog.lookup(request.template.id, request.template.version);
  const violations = validate(request, now, template, deps.configuredChannels);
  if (violations.length > 0 || !template) return { kind: 'invalid', violations };
  const { resolved, violations: destinationViolations } = resolveAll(request, deps);
  if (destinationViolations.length > 0) return { kind: 'invalid', violations: destinationViolations };

  const noticeId = deriveNoticeId(request.eventType, request.eventId, request.recipient.id);
  const deadline = request.deadline ?? now + deps.defaultDeadlineMs;
  const priority = request.priority ?? template.priority ?? DEFAULT_PRIORITY;
  // Channel fallback (docs/architecture.md §12): checked, then sealed like any channel.
  const fallback = effectiveFallback(request, template, deps.configuredChannels);
  const fallbackProblems = fallback
    ? fallbackViolations(fallback, template, deps.configuredChannels, now, deadline)
    : [];
  if (fallbackProblems.length > 0) return { kind: 'invalid', violations: fallbackProblems };
  const sealedFallback = fallback
    ? await sealFallback(fallback, request, template, { noticeId, priority }, deps)
    : undefined;
  if (sealedFallback?.kind === 'invalid') return { kind: 'invalid', violations: [sealedFallback.violation] };
  const prepared: PreparedChannel[] = [];
  for (const { channel, destination } of resolved) {
    const carried =
      channel === fallback?.from && sealedFallback?.kind === 'sealed' ? sealedFallback : undefined;
    let sms: SmsShape | undefined;
    if (channel === 'sms') sms = smsShape(renderSms(template, request.variables).text);
    else renderEmail(template, request.variables);
    const envelope = await deps.sealer.seal(
      { destination: destination.normalized, variables: request.variables },
      { noticeId, channel },
    );
    const reserved = createIntent(
      {
        noticeId,
        channel,
        eventId: request.eventId,
        eventType: request.eventType,
        recipientId: request.recipient.id,
        templateId: template.id,
        templateVersion: template.version,
        contentDigest: channelDigest(
          deps,
          template,
          request.variables,
          destination.fingerprint,
          priority,
          carried?.spec,
        ),
        variableDigests: variableDigests(deps.fingerprintKey, request.variables),
        destination: { fingerprint: destination.fingerprint, masked: destination.masked },
        createdAt: now,
        deadline,
        sms,
        priority,
        submitter: caller?.principal,
        envelope,
      },
      deps.timing,
    );
    const intent = applySendWindow(
      carried ? withFallback(reserved, carried.spec, carried.envelope) : reserved,
      windowAtIntake(request, channel, priority, now, deps.sendWindows),
      now,
    );
    // Deadline risk (docs/architecture.md §11): the estimate, and the warning in the same write.
    const estimate = await estimateAtIntake(intent, deps, now);
    prepared.push({ channel, intent: estimate.intent, estimate });
  }

  // The watch before the write (docs/table-design.md "Watched rows"): whatever happens to this
  // process after the reserve, each row is looked at once more; without it, rows enter the index.
  const watched = await watchBeforeReserve(noticeId, prepared, deps);
  const visible = caller ? (existing: Intent) => canSee(caller, existing) : undefined;
  const reservations = await deps.store.reserveNotice(
    prepared.map(({ intent }) => (watched ? watchedAtIntake(intent, watched.delayMs) : intent)),
    visible,
  );
  const refusedUnseen = reservations.some(
    (r) => (r.kind === 'duplicate' || r.kind === 'conflict') && visible?.(r.existing) === false,
  );
  if (refusedUnseen || reservations.some((r) => r.kind === 'skipped')) return { kind: 'taken', noticeId };
  const channels: ChannelResult[] = reservations.map((result, i) => {
    const channel = (prepared[i] as PreparedChannel).channel;
    if (result.kind === 'created') {
      const { estimatedSendAt, atRisk } = (prepared[i] as PreparedChannel).estimate;
      const held = result.intent.notBefore !== undefined;
      if (!held) deps.backlog?.enqueued(channel, priority, 1);
      return {
        channel,
        state: result.intent.state,
        outcome: 'created',
        ...(estimatedSendAt !== undefined ? { estimatedSendAt, deadlineAtRisk: atRisk } : {}),
        ...(held ? { heldForSendWindow: true } : {}),
      };
    }
    if (result.kind === 'duplicate') return { channel, state: result.existing.state, outcome: 'duplicate' };
    if (result.kind === 'skipped') throw new Error('a skipped reservation is answered as taken above');
    const requested = (prepared[i] as PreparedChannel).intent;
    return {
      channel,
      state: result.existing.state,
      outcome: 'conflict',
      differs: differingParts(result.existing, requested),
    };
  });

  for (const reservation of reservations) {
    if (reservation.kind === 'created' && reservation.intent.escalationPending)
      await publishWarning(reservation.intent, deps);
  }
  const created = channels.filter((c) => c.outcome === 'created');
  // A row held for its send window is enqueued by the reconciler when the window opens.
  const toSend = created.filter((c) => c.heldForSendWindow !== true);
  if (toSend.length > 0) {
    try {
      await deps.queue.enqueue(toSend.map(({ channel }) => laneRef({ noticeId, channel, priority })));
    } catch {
      // The intents are durable; the reconciler re-enqueues unclaimed reserved rows. Failing the
      // request here would make the caller retry into a duplicate for nothing.
    }
  }
  if (channels.some((c) => c.outcome === 'conflict')) return { kind: 'conflict', noticeId, channels };
  return { kind: 'recorded', noticeId, created: created.length > 0, channels };
}
