/**
 * What happens to a stored message after the 201: `queued → sent → delivered` (or the failure a
 * delivery-failure rule names) `statusDelayMs` apart, each status change calling the message's
 * StatusCallback with a real `X-Twilio-Signature`. Messages still on their way when the
 * simulator stopped resume their progression when it starts again on the same store.
 */
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { computeTwilioSignature } from '../../lambdas/providers/twilio/signature.ts';
import { API_VERSION, ERROR_MESSAGES } from './api.ts';
import type { FaultState } from './faults.ts';
import { FINAL_STATUSES, type MessageStore, SimulatedStatus, type StoredMessage } from './store.ts';

const CALLBACK_TIMEOUT_MS = 5_000;

/** Every message in flight waits on this signal; that many listeners is expected, not a leak. */
function lifecycleController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

export class MessageLifecycle {
  // Aborted on reset/close: stops status progression and in-flight callbacks of the old state.
  #controller = lifecycleController();
  readonly #holds = new Set<NodeJS.Timeout>();

  constructor(
    private readonly store: MessageStore,
    private readonly faults: FaultState,
    private readonly authToken: string,
    private readonly clock: () => number,
  ) {}

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Starts the automatic progression of a message (when `autoAdvance` is on). */
  begin(message: StoredMessage): void {
    if (this.faults.autoAdvance) void this.progress(message, this.signal);
  }

  /** Picks up, after a restart, the messages that had not reached a final status. */
  resume(): void {
    for (const message of this.store.all) if (!FINAL_STATUSES.has(message.status)) this.begin(message);
  }

  /** Runs `then` after `ms`, unless the simulator is reset or closed first. */
  hold(ms: number, then: () => void): void {
    const timer = setTimeout(() => {
      this.#holds.delete(timer);
      then();
    }, ms);
    this.#holds.add(timer);
  }

  /** Forgets every message in flight (reset, close). */
  abort(): void {
    this.#controller.abort();
    this.#controller = lifecycleController();
    for (const timer of this.#holds) clearTimeout(timer);
    this.#holds.clear();
  }

  async progress(message: StoredMessage, signal: AbortSignal): Promise<void> {
    try {
      const rule = this.faults.deliveryFailures.find((r) => message.to.endsWith(r.toSuffix));
      if (message.status === SimulatedStatus.queued) {
        await sleep(this.faults.statusDelayMs, undefined, { signal });
        if (rule?.status === 'failed') {
          await this.transition(message, SimulatedStatus.failed, rule.errorCode, signal);
          return;
        }
        await this.transition(message, SimulatedStatus.sent, null, signal);
      }
      await sleep(this.faults.statusDelayMs, undefined, { signal });
      if (rule !== undefined)
        await this.transition(message, SimulatedStatus.undelivered, rule.errorCode, signal);
      else await this.transition(message, SimulatedStatus.delivered, null, signal);
    } catch {
      // Aborted by reset/close: the old state is gone, nothing to report.
    }
  }

  async transition(
    message: StoredMessage,
    status: SimulatedStatus,
    errorCode: number | null,
    signal: AbortSignal = this.signal,
  ): Promise<void> {
    if (signal.aborted) return;
    const now = this.clock();
    message.status = status;
    message.dateUpdated = now;
    if (status === SimulatedStatus.sent && message.dateSent === null) message.dateSent = now;
    message.errorCode = errorCode;
    message.errorMessage = errorCode === null ? null : (ERROR_MESSAGES[errorCode] ?? 'Delivery failed');
    this.store.changed(message);
    if (this.faults.callbacksEnabled && message.statusCallback !== null)
      await this.callback(message, status, signal);
  }

  async callback(message: StoredMessage, status: SimulatedStatus, signal: AbortSignal): Promise<void> {
    const url = message.statusCallback;
    if (url === null) return;
    const params: Record<string, string> = {
      AccountSid: message.accountSid,
      ApiVersion: API_VERSION,
      From: message.from,
      MessageSid: message.sid,
      MessageStatus: status,
      SmsSid: message.sid,
      SmsStatus: status,
      To: message.to,
    };
    if (message.errorCode !== null) params.ErrorCode = String(message.errorCode);
    let httpStatus: number | null = null;
    // One controller per callback, detached afterwards, so thousands of messages do not pile
    // listeners onto the shared lifecycle signal.
    const request = new AbortController();
    const abort = () => request.abort();
    signal.addEventListener('abort', abort, { once: true });
    const timer = setTimeout(abort, CALLBACK_TIMEOUT_MS);
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-twilio-signature': computeTwilioSignature(this.authToken, url, params),
          // Twilio's webhook dedupe token: the same for a retried delivery of one status.
          'i-twilio-idempotency-token': `${message.sid}-${status}`,
          'user-agent': 'TwilioProxy/1.1',
        },
        body: new URLSearchParams(params).toString(),
        signal: request.signal,
        redirect: 'manual',
      });
      httpStatus = response.status;
      await response.arrayBuffer();
    } catch {
      // Twilio gives up silently too (one retry at most); the test reads `callbacks` to see it.
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', abort);
    }
    if (signal.aborted) return;
    message.callbacks.push({ status, httpStatus });
    this.store.changed(message);
    if (httpStatus !== null && httpStatus < 300) this.faults.mutableCounters.callbacksSent++;
    else this.faults.mutableCounters.callbacksFailed++;
  }
}
