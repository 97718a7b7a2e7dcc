/**
 * What the SMS simulator holds: its messages, in creation order, optionally kept in a JSON file
 * (written before the request that changed it is answered, loaded at start), so that after a
 * kill -9 of the stack the messages it accepted can still be counted and their delivery goes on.
 * Phone numbers and bodies are kept (tests read them back) but never printed: they may carry
 * health information even in test data.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export const SimulatedStatus = {
  queued: 'queued',
  sending: 'sending',
  sent: 'sent',
  delivered: 'delivered',
  undelivered: 'undelivered',
  failed: 'failed',
  canceled: 'canceled',
} as const;
export type SimulatedStatus = (typeof SimulatedStatus)[keyof typeof SimulatedStatus];

export interface CallbackAttempt {
  readonly status: SimulatedStatus;
  /** `null` when the request failed (refused, timed out). */
  readonly httpStatus: number | null;
}

export interface SimulatedMessage {
  readonly sid: string;
  readonly accountSid: string;
  readonly to: string;
  readonly from: string;
  readonly body: string;
  readonly status: SimulatedStatus;
  readonly statusCallback: string | null;
  readonly numSegments: number;
  /** Epoch ms from the simulator's clock. */
  readonly dateCreated: number;
  readonly dateSent: number | null;
  readonly dateUpdated: number;
  readonly errorCode: number | null;
  readonly errorMessage: string | null;
  readonly callbacks: readonly CallbackAttempt[];
}

export interface StoredMessage {
  seq: number;
  sid: string;
  accountSid: string;
  to: string;
  from: string;
  body: string;
  status: SimulatedStatus;
  statusCallback: string | null;
  numSegments: number;
  dateCreated: number;
  dateSent: number | null;
  dateUpdated: number;
  errorCode: number | null;
  errorMessage: string | null;
  callbacks: CallbackAttempt[];
}

export const FINAL_STATUSES: ReadonlySet<SimulatedStatus> = new Set([
  SimulatedStatus.delivered,
  SimulatedStatus.undelivered,
  SimulatedStatus.failed,
  SimulatedStatus.canceled,
]);

/**
 * The messages, in creation order. With a file, every change is appended to it as the message's
 * new snapshot (one JSON line, synchronously, before the request or callback that made it goes
 * on), and the file is replayed at start (last snapshot per SID wins) and compacted.
 */
export class MessageStore {
  #messages: StoredMessage[] = [];
  #bySid = new Map<string, StoredMessage>();
  #seq = 0;

  constructor(private readonly file?: string) {
    if (file) this.#load(file);
  }

  get all(): readonly StoredMessage[] {
    return this.#messages;
  }

  get(sid: string): StoredMessage | undefined {
    return this.#bySid.get(sid);
  }

  add(fields: Omit<StoredMessage, 'seq' | 'sid'>): StoredMessage {
    const message: StoredMessage = {
      seq: this.#seq++,
      sid: `SM${randomBytes(16).toString('hex')}`,
      ...fields,
    };
    this.#messages.push(message);
    this.#bySid.set(message.sid, message);
    this.changed(message);
    return message;
  }

  /** Records a change to `message` (status, callbacks); a no-op without a file. */
  changed(message: StoredMessage): void {
    if (this.file) appendFileSync(this.file, `${JSON.stringify(message)}\n`, { mode: 0o600 });
  }

  clear(): void {
    this.#messages = [];
    this.#bySid = new Map();
    this.#seq = 0;
    if (this.file) writeFileSync(this.file, '', { mode: 0o600 });
  }

  copy(message: StoredMessage): SimulatedMessage {
    const { seq: _seq, ...rest } = message;
    return { ...rest, callbacks: [...message.callbacks] };
  }

  #load(file: string): void {
    mkdirSync(dirname(file), { recursive: true });
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      let message: StoredMessage;
      try {
        message = JSON.parse(line) as StoredMessage;
      } catch {
        continue; // a line cut short by a kill -9 mid-append
      }
      const known = this.#bySid.get(message.sid);
      if (known) Object.assign(known, message);
      else {
        this.#messages.push(message);
        this.#bySid.set(message.sid, message);
      }
      this.#seq = Math.max(this.#seq, message.seq + 1);
    }
    this.#messages.sort((x, y) => x.seq - y.seq);
    // Compact: one line per message from here on.
    const staging = `${file}.${process.pid}.tmp`;
    writeFileSync(staging, this.#messages.map((m) => `${JSON.stringify(m)}\n`).join(''), { mode: 0o600 });
    renameSync(staging, file);
  }
}

export const E164 = /^\+[1-9]\d{1,14}$/;
export const ALPHANUMERIC_SENDER = /^(?=.*[A-Za-z])[A-Za-z0-9 ]{1,11}$/;
export const SHORT_CODE = /^\d{3,8}$/;
export const GSM7_BASIC = new Set(
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà',
);
export const GSM7_EXTENSION = new Set('^{}\\[~]|€\f');

/** Segments as carriers count them: GSM-7 160/153 septets, otherwise UCS-2 70/67 code units. */
export function countSegments(body: string): number {
  let septets = 0;
  let gsm = true;
  for (const ch of body) {
    if (GSM7_BASIC.has(ch)) septets += 1;
    else if (GSM7_EXTENSION.has(ch)) septets += 2;
    else {
      gsm = false;
      break;
    }
  }
  if (gsm) return septets <= 160 ? 1 : Math.ceil(septets / 153);
  return body.length <= 70 ? 1 : Math.ceil(body.length / 67);
}
