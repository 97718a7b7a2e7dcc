import type { Channel } from '../domain/channel.ts';
import { resolveDestination } from '../domain/destination.ts';
import { InvalidDestinationError } from '../domain/errors.ts';
import {
  type FallbackRequest,
  type FallbackSpec,
  fallbackDigestPart,
  parseIsoDuration,
} from '../domain/fallback.ts';
import { contentDigest } from '../domain/identity.ts';
import type { Priority } from '../domain/priority.ts';
import { decideSendWindow, type SendWindows, type WindowDecision } from '../domain/send-window.ts';
import { smsShape } from '../domain/sms-shape.ts';
import type { TemplateDefinition } from '../domain/template.ts';
import { renderSms } from '../domain/template-render.ts';
import type { IntakeDependencies } from './dependencies.ts';
import type { NoticeRequest, Violation } from './notice-request.ts';

/*
 * The delivery policies intake applies (docs/architecture.md §12): a channel fallback (the
 * request's, else its template's default where it fits) sealed and digested like any channel,
 * and each channel's send window in the recipient's zone.
 */

export function rawDestination(request: NoticeRequest, channel: Channel): string | undefined {
  return channel === 'email' ? request.recipient.email : request.recipient.phone;
}

/**
 * The fallback this notice gets: the request's own; without one, its template's default when it
 * fits (its `from` requested, its `to` not, configured, and the recipient's `to` destination
 * given); otherwise none. A default that does not fit is not applied: it is a default.
 */
export function effectiveFallback(
  request: NoticeRequest,
  template: TemplateDefinition,
  configuredChannels: readonly Channel[],
): FallbackRequest | undefined {
  if (request.fallback) return request.fallback;
  const fallback = template.fallback;
  if (!fallback) return undefined;
  const fits =
    request.channels.includes(fallback.from) &&
    !request.channels.includes(fallback.to) &&
    configuredChannels.includes(fallback.to) &&
    rawDestination(request, fallback.to) !== undefined;
  const withinMs = parseIsoDuration(fallback.within);
  return fits && withinMs !== undefined ? { from: fallback.from, to: fallback.to, withinMs } : undefined;
}

/** What the deployment and the template must allow for a requested fallback (422 material). */
export function fallbackViolations(
  fallback: FallbackRequest,
  template: TemplateDefinition,
  configuredChannels: readonly Channel[],
  intakeAt: number,
  deadline: number,
): Violation[] {
  const violations: Violation[] = [];
  if (!configuredChannels.includes(fallback.to)) {
    violations.push({
      path: 'fallback.to',
      code: 'channel_not_configured',
      message: `this deployment does not send ${fallback.to}: its provider is none`,
    });
  } else if (!template[fallback.to]) {
    violations.push({
      path: 'fallback.to',
      code: 'channel_not_in_template',
      message: `template ${template.id} ${template.version} has no ${fallback.to} body`,
    });
  }
  if (intakeAt + fallback.withinMs >= deadline) {
    violations.push({
      path: 'fallback.within',
      code: 'fallback_after_deadline',
      message: "must end before the notice's deadline: a fallback reserved after it could not be sent",
    });
  }
  return violations;
}

/** The channel's content digest: template, variables, destination, lane (and a fallback it carries). */
export function channelDigest(
  deps: Pick<IntakeDependencies, 'fingerprintKey'>,
  template: TemplateDefinition,
  variables: Readonly<Record<string, unknown>>,
  destinationFingerprint: string,
  priority: Priority,
  fallback?: FallbackSpec,
): string {
  return contentDigest(deps.fingerprintKey, {
    templateId: template.id,
    templateVersion: template.version,
    variables: { ...variables },
    destinationFingerprint,
    priority,
    ...(fallback ? { fallback: fallbackDigestPart(fallback) } : {}),
  });
}

export type SealedFallback =
  | { readonly kind: 'sealed'; readonly spec: FallbackSpec; readonly envelope: string }
  | { readonly kind: 'invalid'; readonly violation: Violation };

/**
 * The `to` channel as the fallback will reserve it: its destination resolved (fingerprint and
 * masked form) and sealed with the variables under (noticeId, to), exactly as intake seals a
 * requested channel; its content digest and SMS shape computed now, so the row it becomes is the
 * row a request for that channel would have made.
 */
export async function sealFallback(
  fallback: FallbackRequest,
  request: NoticeRequest,
  template: TemplateDefinition,
  context: { readonly noticeId: string; readonly priority: Priority },
  deps: Pick<IntakeDependencies, 'fingerprintKey' | 'sealer'>,
): Promise<SealedFallback> {
  let destination: ReturnType<typeof resolveDestination>;
  try {
    destination = resolveDestination(
      deps.fingerprintKey,
      fallback.to,
      rawDestination(request, fallback.to) ?? '',
    );
  } catch (error) {
    if (!(error instanceof InvalidDestinationError)) throw error;
    const path = fallback.to === 'email' ? 'recipient.email' : 'recipient.phone';
    return { kind: 'invalid', violation: { path, code: error.reason, message: error.message } };
  }
  const envelope = await deps.sealer.seal(
    { destination: destination.normalized, variables: request.variables },
    { noticeId: context.noticeId, channel: fallback.to },
  );
  const spec: FallbackSpec = {
    to: fallback.to,
    withinMs: fallback.withinMs,
    destination: { fingerprint: destination.fingerprint, masked: destination.masked },
    contentDigest: channelDigest(
      deps,
      template,
      request.variables,
      destination.fingerprint,
      context.priority,
    ),
    ...(fallback.to === 'sms' ? { sms: smsShape(renderSms(template, request.variables).text) } : {}),
    ...(request.recipient.timeZone !== undefined ? { timeZone: request.recipient.timeZone } : {}),
  };
  return { kind: 'sealed', spec, envelope };
}

/** The channel's send-window verdict for this notice, in the recipient's zone (else the default). */
export function windowAtIntake(
  request: NoticeRequest,
  channel: Channel,
  priority: Priority,
  now: number,
  windows: SendWindows | undefined,
): WindowDecision {
  if (!windows) return { kind: 'open' };
  return decideSendWindow({
    now,
    window: windows[channel],
    zone: request.recipient.timeZone ?? windows.defaultZone,
    priority,
  });
}
