import { isSameKeyedContent } from '../domain/archive-record.ts';
import { type Caller, canSee, canSeeKeyRecord } from '../domain/caller.ts';
import type { Channel } from '../domain/channel.ts';
import {
  type ComparableContent,
  type DifferingPart,
  differingParts,
  undeterminedParts,
} from '../domain/content-parts.ts';
import { type ResolvedDestination, resolveDestination } from '../domain/destination.ts';
import { InvalidDestinationError } from '../domain/errors.ts';
import { type FallbackSpec, withFallback } from '../domain/fallback.ts';
import { containsContactData, deriveNoticeId, variableDigests } from '../domain/identity.ts';
import { createIntent, type Intent, type SmsShape, watchedAtIntake } from '../domain/intent.ts';
import { DEFAULT_PRIORITY, type Priority } from '../domain/priority.ts';
import { applySendWindow } from '../domain/send-window.ts';
import { smsShape } from '../domain/sms-shape.ts';
import type { IntentState } from '../domain/state-machine.ts';
import type { TemplateDefinition } from '../domain/template.ts';
import { renderEmail, renderSms } from '../domain/template-render.ts';
import { checkVariables } from '../domain/template-variables.ts';
import { type IntentRef, laneRef } from '../ports/intent-queue.port.ts';
import type { KeyRecord } from '../ports/notice-archive.port.ts';
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
  return violations;
}

/**
 * The deadline's rules. They concern the channels this request would record: a request whose
 * every channel is recorded already (a replay of a notice past the hot window, answered from its
 * key records) is answered whatever its deadline says.
 */
function deadlineViolations(request: NoticeRequest, now: number): Violation[] {
  if (request.deadline !== undefined && request.deadline <= now) {
    return [{ path: 'deadline', code: 'deadline_not_in_future', message: 'deadline must lie in the future' }];
  }
  if (request.deadline !== undefined && request.deadline > now + MAX_DEADLINE_MS) {
    return [{ path: 'deadline', code: 'deadline_too_far', message: 'deadline must lie within 30 days' }];
  }
  return [];
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
 * The requested content of one channel, as a conflict compares it (domain/content-parts.ts): the
 * same fields whether it is recorded now or compared with a row, or a key record, recorded before.
 */
function requestedContent(
  request: NoticeRequest,
  template: TemplateDefinition,
  { channel, destination }: { channel: Channel; destination: ResolvedDestination },
  priority: Priority,
  deps: Pick<IntakeDependencies, 'fingerprintKey'>,
  fallback: FallbackSpec | undefined,
): ComparableContent {
  return {
    channel,
    templateId: template.id,
    templateVersion: template.version,
    contentDigest: channelDigest(
      deps,
      template,
      request.variables,
      destination.fingerprint,
      priority,
      fallback,
    ),
    variableDigests: variableDigests(deps.fingerprintKey, request.variables),
    destination: { fingerprint: destination.fingerprint, masked: destination.masked },
    priority,
    fallback,
  };
}

/**
 * A channel whose row resolved, answered from its key record (kept for the archive's retention,
 * lambdas/ports/notice-archive.port.ts) as a row would answer: the same content is a replay, other
 * content a conflict naming what differs. Never reserved again, whether or not its row is still
 * in the table: a notice past the hot window is never sent twice.
 *
 * The key record keeps a digest of the content, not its parts: what differs is read from the
 * archived row it names (one GetObject, conflicts only). When that row cannot be read (S3 failing,
 * an object not where the record says), the answer is still the conflict, naming every part as
 * `may_differ` (docs/api.md "409: what differs"): a replay is never sent again, nor answered 5xx.
 */
async function answerFromKeyRecord(
  record: KeyRecord,
  requested: ComparableContent,
  deps: Pick<IntakeDependencies, 'archivedRows'>,
): Promise<ChannelResult> {
  if (isSameKeyedContent(record, requested))
    return { channel: record.channel, state: record.state, outcome: 'duplicate' };
  const row = await deps.archivedRows
    .archivedRow(record.rowsObject, record.noticeId, record.channel)
    .catch(() => undefined);
  return {
    channel: record.channel,
    state: record.state,
    outcome: 'conflict',
    differs: row ? differingParts(row, requested) : undeterminedParts(record.channel),
  };
}

/**
 * Intake. Primary course:
 *  1. check the request against the channels this deployment sends, the template catalog, the
 *     clock and the destinations (422 material) before anything is sealed or written;
 *  2. read the notice's key records (one eventually consistent GetItem of its bucket): a requested channel with
 *     one resolved already, and its row may have left the table (HOT_RETENTION): it is answered
 *     from the key record (duplicate, or conflict naming what differs from the archived row) and
 *     not reserved;
 *  3. per channel still to record: render once (proves it renders, measures SMS segments), seal
 *     destination + variables, build the `reserved` intent;
 *  4. send each of those channels' watch (a delayed message: docs/table-design.md "Watched rows"),
 *     so that the rows may stay out of the open index while on the happy path;
 *  5. reserve those channels in one atomic write (created / duplicate / conflict per channel), so
 *     that of concurrent identical requests exactly one is told 202;
 *  6. enqueue a reference for each newly created channel; answer 409 if any channel conflicts.
 * A channel this request added is recorded and sent even when another channel conflicts (the
 * 409 lists per channel what happened): taking it back would race a concurrent replay that was
 * already told the row exists. The same holds across the hot window: a request that adds a
 * channel to a notice whose other channel left the table records the new channel and answers the
 * old one from its key record.
 * A crash between 5 and 6 loses nothing: the watch puts the reserved row into the open index
 * (without a watch it is there already) and the reconciler re-enqueues a reserved row that no
 * worker claimed within SEND_LEASE_MS.
 *
 * A key record exists from a row's resolution on (the archiver writes it within minutes; the row
 * stays HOT_RETENTION, at least a day, in the table), so no moment exists where a resolved
 * channel is in neither and could be reserved again. The deadline's rules (and a fallback's)
 * concern the channels this request records: a replay whose every channel is answered from key
 * records is answered whatever its deadline says (which has usually passed by then).
 *
 * `caller` (docs/api.md "Callers"): every row this request reserves records its principal as the
 * submitter; a submitter's request that meets a channel of the notice it may not see (another
 * principal's, or one recorded before submitters were), in the table or in a key record, writes
 * nothing and answers `taken`, so a replay of someone else's event neither reveals nor alters
 * their notice. Operators replay any notice. Without a caller (benchmarks, use-case tests) no
 * submitter is recorded and no row is refused: the HTTP routes always pass one.
 */
export async function submitNotice(
  request: NoticeRequest,
  deps: IntakeDependencies & DeadlineRiskDependencies,
  caller?: Caller,
): Promise<SubmitResult> {
  const now = deps.clock.now();
  const template = deps.catalog.lookup(request.template.id, request.template.version);
  const violations = validate(request, template, deps.configuredChannels);
  if (!template) return { kind: 'invalid', violations };
  const late = deadlineViolations(request, now);
  if (violations.length > 0) return { kind: 'invalid', violations: [...violations, ...late] };
  const { resolved, violations: destinationViolations } = resolveAll(request, deps);
  if (destinationViolations.length > 0) {
    return { kind: 'invalid', violations: [...destinationViolations, ...late] };
  }

  const noticeId = deriveNoticeId(request.eventType, request.eventId, request.recipient.id);
  const keyRecords = new Map(
    (await deps.keyRecords.keyRecordsOf(noticeId)).map((record) => [record.channel, record]),
  );
  const visible = caller ? (existing: Pick<Intent, 'submitter'>) => canSee(caller, existing) : undefined;
  const unseen = request.channels.some((channel) => {
    const record = keyRecords.get(channel);
    return record !== undefined && caller !== undefined && !canSeeKeyRecord(caller, record);
  });
  if (unseen) return { kind: 'taken', noticeId };
  const toRecord = resolved.filter(({ channel }) => !keyRecords.has(channel));
  if (toRecord.length > 0 && late.length > 0) return { kind: 'invalid', violations: late };

  const deadline = request.deadline ?? now + deps.defaultDeadlineMs;
  const priority = request.priority ?? template.priority ?? DEFAULT_PRIORITY;
  // Channel fallback (docs/architecture.md §12): checked, then sealed like any channel. Its
  // rules bind when its first channel is recorded now; an archived one keeps the fallback it had.
  const fallback = effectiveFallback(request, template, deps.configuredChannels);
  const fallbackProblems =
    fallback && !keyRecords.has(fallback.from)
      ? fallbackViolations(fallback, template, deps.configuredChannels, now, deadline)
      : [];
  if (fallbackProblems.length > 0) return { kind: 'invalid', violations: fallbackProblems };
  const sealedFallback = fallback
    ? await sealFallback(fallback, request, template, { noticeId, priority }, deps)
    : undefined;
  if (sealedFallback?.kind === 'invalid') return { kind: 'invalid', violations: [sealedFallback.violation] };
  const carriedBy = (channel: Channel) =>
    channel === fallback?.from && sealedFallback?.kind === 'sealed' ? sealedFallback : undefined;

  const answered = new Map<Channel, ChannelResult>();
  for (const target of resolved) {
    const record = keyRecords.get(target.channel);
    if (!record) continue;
    const requested = requestedContent(
      request,
      template,
      target,
      priority,
      deps,
      carriedBy(target.channel)?.spec,
    );
    answered.set(target.channel, await answerFromKeyRecord(record, requested, deps));
  }
  const prepared: PreparedChannel[] = [];
  for (const target of toRecord) {
    const { channel, destination } = target;
    const carried = carriedBy(channel);
    let sms: SmsShape | undefined;
    if (channel === 'sms') sms = smsShape(renderSms(template, request.variables).text);
    else renderEmail(template, request.variables);
    const envelope = await deps.sealer.seal(
      { destination: destination.normalized, variables: request.variables },
      { noticeId, channel },
    );
    const content = requestedContent(request, template, target, priority, deps, carried?.spec);
    const reserved = createIntent(
      {
        noticeId,
        channel,
        eventId: request.eventId,
        eventType: request.eventType,
        recipientId: request.recipient.id,
        templateId: content.templateId,
        templateVersion: content.templateVersion,
        contentDigest: content.contentDigest,
        variableDigests: content.variableDigests,
        destination: content.destination,
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
  const watched = prepared.length > 0 ? await watchBeforeReserve(noticeId, prepared, deps) : undefined;
  const reservations =
    prepared.length > 0
      ? await deps.store.reserveNotice(
          prepared.map(({ intent }) => (watched ? watchedAtIntake(intent, watched.delayMs) : intent)),
          visible,
        )
      : [];
  const refusedUnseen = reservations.some(
    (r) => (r.kind === 'duplicate' || r.kind === 'conflict') && visible?.(r.existing) === false,
  );
  if (refusedUnseen || reservations.some((r) => r.kind === 'skipped')) return { kind: 'taken', noticeId };
  reservations.forEach((result, i) => {
    const { channel, intent: requested, estimate } = prepared[i] as PreparedChannel;
    if (result.kind === 'created') {
      const { estimatedSendAt, atRisk } = estimate;
      const held = result.intent.notBefore !== undefined;
      if (!held) deps.backlog?.enqueued(channel, priority, 1);
      answered.set(channel, {
        channel,
        state: result.intent.state,
        outcome: 'created',
        ...(estimatedSendAt !== undefined ? { estimatedSendAt, deadlineAtRisk: atRisk } : {}),
        ...(held ? { heldForSendWindow: true } : {}),
      });
    } else if (result.kind === 'duplicate') {
      answered.set(channel, { channel, state: result.existing.state, outcome: 'duplicate' });
    } else if (result.kind === 'conflict') {
      answered.set(channel, {
        channel,
        state: result.existing.state,
        outcome: 'conflict',
        differs: differingParts(result.existing, requested),
      });
    } else {
      throw new Error('a skipped reservation is answered as taken above');
    }
  });
  const channels = request.channels.map((channel) => answered.get(channel) as ChannelResult);

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
