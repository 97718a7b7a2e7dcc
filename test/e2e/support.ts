import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

/** The timeline of docs/architecture.md §6, as much of it as these tests read. */
export interface Transition {
  readonly seq: number;
  readonly at: string;
  readonly from: string | null;
  readonly to: string;
  readonly reason: string;
  readonly attempt?: number;
  readonly detail?: unknown;
  readonly actor?: string;
}

export interface ChannelTimeline {
  readonly channel: 'email' | 'sms';
  readonly state: string;
  readonly destination: { readonly fingerprint: string; readonly masked: string };
  readonly provider: string | null;
  readonly providerReceiptId: string | null;
  readonly attempts: number;
  /** Set while the channel's `unknown` is escalated and waits for an operator. */
  readonly escalatedAt?: string | null;
  readonly transitions: readonly Transition[];
}

export interface Timeline {
  readonly noticeId: string;
  readonly eventId: string;
  readonly channels: readonly ChannelTimeline[];
}

/** States in which the system still owes an action on its own (not waiting on a provider's answer). */
export const IN_PROGRESS = new Set(['reserved', 'sending', 'retry_scheduled']);
export const SENT = new Set(['accepted', 'delivered']);

/**
 * Per-test destinations: SES mailbox-simulator addresses with a label (the simulator ignores
 * it) and a random North American test number that never ends in 0000 (the SMS simulator's
 * "undeliverable" suffix).
 */
export function testRecipient(tag = randomBytes(4).toString('hex')): {
  email: string;
  phone: string;
  tag: string;
} {
  const digits = String(1_000_000 + (randomBytes(3).readUIntBE(0, 3) % 8_999_999)).slice(-7);
  const phone = `+1555${digits.endsWith('0000') ? `${digits.slice(0, 6)}1` : digits}`;
  return { email: `success+${tag}@simulator.amazonses.com`, phone, tag };
}

/** The docs/architecture.md §6 example with the given identity and destinations, deadline a day ahead. */
export function noticeBody(overrides: {
  eventId: string;
  email: string;
  phone: string;
  recipientId?: string;
  variables?: Record<string, unknown>;
}): Record<string, unknown> {
  return {
    eventId: overrides.eventId,
    eventType: 'lab-result-ready',
    recipient: { id: overrides.recipientId ?? 'pat_1042', email: overrides.email, phone: overrides.phone },
    channels: ['email', 'sms'],
    template: { id: 'lab-result-ready', version: 'v3' },
    variables: overrides.variables ?? { firstName: 'Ada' },
    deadline: new Date(Date.now() + 86_400_000).toISOString(),
  };
}

export async function postNotice(
  apiUrl: string,
  body: unknown,
): Promise<{ status: number; contentType: string | null; json: Record<string, unknown> }> {
  const response = await fetch(`${apiUrl}/v1/notices`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    json: (await response.json()) as Record<string, unknown>,
  };
}

export async function getTimeline(apiUrl: string, noticeId: string): Promise<Timeline> {
  const response = await fetch(`${apiUrl}/v1/notices/${noticeId}`, { signal: AbortSignal.timeout(10_000) });
  if (response.status !== 200) throw new Error(`GET timeline answered ${response.status}`);
  return (await response.json()) as Timeline;
}

/** Polls `probe` until it returns a value other than `undefined`; bounded in time and in count. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  { timeoutMs = 20_000, intervalMs = 50 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  const maxPolls = Math.ceil(timeoutMs / intervalMs) + 1;
  let lastError: unknown;
  for (let poll = 0; poll < maxPolls && Date.now() < deadline; poll++) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    await sleep(intervalMs);
  }
  const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
}

/** Messages the SMS simulator holds (its test endpoint; no credentials needed). */
export async function simulatorMessages(
  twilioBaseUrl: string,
): Promise<{ sid: string; to: string; status: string }[]> {
  const response = await fetch(`${twilioBaseUrl}/__messages`, { signal: AbortSignal.timeout(5_000) });
  if (!response.ok) throw new Error(`GET /__messages answered ${response.status}`);
  const body = (await response.json()) as { messages: { sid: string; to: string; status: string }[] };
  return body.messages;
}

/** seq 1..n, times not going backwards, each `from` the previous `to`. */
export function assertWellFormed(transitions: readonly Transition[]): string[] {
  const problems: string[] = [];
  transitions.forEach((t, i) => {
    if (t.seq !== i + 1) problems.push(`seq ${t.seq} at position ${i + 1}`);
    const previous = transitions[i - 1];
    if (previous === undefined) {
      if (t.from !== null) problems.push(`first transition comes from ${t.from}`);
      return;
    }
    if (t.from !== previous.to)
      problems.push(`seq ${t.seq} comes from ${t.from}, previous went to ${previous.to}`);
    if (Date.parse(t.at) < Date.parse(previous.at))
      problems.push(`seq ${t.seq} is earlier than seq ${previous.seq}`);
  });
  return problems;
}
