import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import type { EventBridgeEvent } from 'aws-lambda';
import { SES_PUBLISHED_EVENTS } from '../../lambdas/providers/ses/descriptor.ts';
import { readSesStore, type SesStoredEmail } from './server.ts';

/** The event types the deployed configuration set publishes (one list, the SES module's). */
const PUBLISHED: ReadonlySet<string> = new Set(SES_PUBLISHED_EVENTS.map((e) => e.eventType));

/**
 * aws-ses-v2-local publishes no events. This plays SES event publishing for the local stack:
 * every email that lands in the emulator's store becomes the SES-shaped EventBridge events a
 * configuration set would publish. SES produces these for each mail, following the SES mailbox
 * simulator:
 *
 *   success@simulator.amazonses.com        Send, Delivery
 *   bounce@simulator.amazonses.com         Send, Bounce (Permanent/General)
 *   complaint@simulator.amazonses.com      Send, Delivery, Complaint (abuse)
 *   suppressionlist@simulator.amazonses.com Send, Bounce (Permanent/OnAccountSuppressionList)
 *   anything else                          Send, Delivery
 *
 * and the configuration set passes on only the types it publishes (SES_PUBLISHED_EVENTS: no
 * Send), as the deployed one does. Tags are copied from the `X-Notice-Intent` header, since the
 * emulator drops EmailTags.
 */
export function sesEventsFor(email: SesStoredEmail, now = Date.now()): EventBridgeEvent<string, unknown>[] {
  const to = (email.destination.to[0] ?? '').toLowerCase();
  // The mailbox simulator ignores a +label (bounce+case7@ bounces), as SES does.
  const local = to.endsWith('@simulator.amazonses.com') ? to.split('@')[0]?.split('+')[0] : 'success';
  const correlation = email.headers?.find((h) => h.name.toLowerCase() === 'x-notice-intent')?.value;
  const sentAt = new Date(email.at * 1000).toISOString();
  const at = new Date(Math.max(now, email.at * 1000)).toISOString();
  const mail = {
    timestamp: sentAt,
    messageId: email.messageId,
    source: email.from,
    destination: email.destination.to,
    headersTruncated: false,
    headers: email.headers ?? [],
    tags: {
      'ses:configuration-set': ['notice-ledger-local'],
      ...(correlation ? { notice_intent: [correlation] } : {}),
    },
  };
  const event = (detailType: string, eventType: string, extra: Record<string, unknown>) => ({
    version: '0',
    id: randomUUID(),
    'detail-type': detailType,
    source: 'aws.ses',
    account: '000000000000',
    time: at,
    region: 'us-east-1',
    resources: [],
    detail: { eventType, mail, ...extra },
  });
  const events = [event('Email Sent', 'Send', { send: {} })];
  const delivery = event('Email Delivered', 'Delivery', {
    delivery: {
      timestamp: at,
      processingTimeMillis: 100,
      recipients: email.destination.to,
      smtpResponse: '250 2.6.0 Message received',
    },
  });
  switch (local) {
    case 'bounce':
    case 'suppressionlist':
      events.push(
        event('Email Bounced', 'Bounce', {
          bounce: {
            bounceType: 'Permanent',
            bounceSubType: local === 'bounce' ? 'General' : 'OnAccountSuppressionList',
            bouncedRecipients: [{ emailAddress: to }],
            timestamp: at,
            feedbackId: randomUUID(),
          },
        }),
      );
      break;
    case 'complaint':
      events.push(
        delivery,
        event('Email Complaint Received', 'Complaint', {
          complaint: {
            complainedRecipients: [{ emailAddress: to }],
            complaintFeedbackType: 'abuse',
            complaintSubType: null,
            timestamp: at,
            feedbackId: randomUUID(),
          },
        }),
      );
      break;
    default:
      events.push(delivery);
  }
  return events.filter((e) => PUBLISHED.has(e.detail.eventType));
}

const FEED_CONCURRENCY = 8;

function readCursor(file: string): number {
  try {
    const since = (JSON.parse(readFileSync(file, 'utf8')) as { since?: unknown }).since;
    return typeof since === 'number' && Number.isFinite(since) ? since : 0;
  } catch {
    return 0; // none yet (or unreadable): replay the store, which is safe
  }
}

async function writeCursor(file: string, since: number): Promise<void> {
  await writeFile(`${file}.tmp`, JSON.stringify({ since }));
  await rename(`${file}.tmp`, file);
}

export interface SesEventFeeder {
  /** One pass over the store; resolves when every new email's events were handled. */
  poll(): Promise<number>;
  stop(): void;
}

/**
 * Polls the emulator's store and hands each new email's events to `deliver` (the SES events
 * handler), in order. A failing delivery is retried on the next poll, as EventBridge would.
 *
 * `cursorFile` keeps how far it got across restarts (written after the events were handled, so
 * a kill replays at most the last pass, never skips one): without it a restart replays the
 * whole store, which is harmless (every event is idempotent) but grows with the store.
 */
export function startSesEventFeeder(options: {
  endpoint: string;
  deliver: (event: EventBridgeEvent<string, unknown>) => Promise<unknown>;
  intervalMs?: number;
  onError?: (error: unknown) => void;
  cursorFile?: string;
}): SesEventFeeder {
  const done = new Set<string>();
  let since = options.cursorFile ? readCursor(options.cursorFile) : 0;
  let running: Promise<number> | undefined;
  let stopped = false;

  async function pass(): Promise<number> {
    const emails = (await readSesStore(options.endpoint, since)).filter(
      (email) => !done.has(email.messageId),
    );
    // Different mails are independent: deliver them side by side (a few at a time), each
    // mail's events in order. One at a time, a restart replaying the store made the newest
    // mails' events seconds late, long enough to look like "SES never took it".
    let next = 0;
    let handled = 0;
    await Promise.all(
      Array.from({ length: Math.min(FEED_CONCURRENCY, emails.length) }, async () => {
        while (next < emails.length) {
          const email = emails[next++] as SesStoredEmail;
          for (const event of sesEventsFor(email)) await options.deliver(event);
          done.add(email.messageId);
          handled += 1;
        }
      }),
    );
    // Re-read the last second next time: the store's filter has one-second resolution.
    if (emails.length > 0) {
      since = Math.max(since, ...emails.map((e) => e.at));
      if (options.cursorFile) await writeCursor(options.cursorFile, since);
    }
    return handled;
  }

  function poll(): Promise<number> {
    running ??= pass().finally(() => {
      running = undefined;
    });
    return running;
  }

  const timer = setInterval(() => {
    if (!stopped) poll().catch((error: unknown) => options.onError?.(error));
  }, options.intervalMs ?? 500);
  timer.unref();

  return {
    poll,
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
