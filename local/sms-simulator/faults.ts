/**
 * The SMS simulator's fault controls: a token-bucket rate limit, a queue of scripted faults
 * (`failNext`), seeded random faults, callback and progression switches, delivery failures by
 * destination suffix, and the counters tests read. Validated on every change, so a bad patch
 * changes nothing.
 */
import { seededRandom as prng } from '../seeded-random.ts';
import {
  type FaultProbabilities,
  mergeProbabilities,
  type TransportFault,
  validateStatusFields,
  validateTransportFault,
  validDelay,
} from '../simulator-faults.ts';

export type FailNextFault =
  /** Answer with this status and a Twilio error body; nothing stored. */
  | {
      readonly kind: 'status';
      readonly status: number;
      readonly code?: number;
      readonly retryAfterSeconds?: number;
    }
  | TransportFault;

export type { FaultProbabilities };

/** A destination whose number ends in `toSuffix` is accepted, then ends in `status` with `errorCode`. */
export interface DeliveryFailureRule {
  readonly toSuffix: string;
  readonly status: 'undelivered' | 'failed';
  readonly errorCode: number;
}

export interface FaultSettings {
  /** Token bucket: at most R tokens, refilled at R per second; `null` = unlimited. */
  rateLimitPerSecond: number | null;
  failNext: FailNextFault[];
  probabilities: FaultProbabilities;
  /** Setting it restarts the PRNG, so a run with the same seed draws the same faults. */
  seed: number;
  /** How long randomized timeouts hold the response. */
  randomTimeoutMs: number;
  callbacksEnabled: boolean;
  /** Delay between status changes. */
  statusDelayMs: number;
  /** When false, messages stay `queued` until moved with `setStatus`. */
  autoAdvance: boolean;
  deliveryFailures: DeliveryFailureRule[];
  /**
   * When set, every list request (`GET …/Messages.json`) answers this 4xx/5xx status with a Twilio
   * error body: the listing a lookup relies on is down, so an `unknown` stays undecided (a person
   * must settle it). Create and fetch are unaffected. `null`: lists answer normally.
   */
  listingStatus: number | null;
}

export interface SimulatorCounters {
  /** Every POST to Messages.json, whatever the answer. */
  readonly createCalls: number;
  /** Messages stored (including those whose response was then withheld). */
  readonly accepted: number;
  /** 429 answers, from the bucket or injected. */
  readonly rateLimited: number;
  readonly faultsInjected: number;
  readonly callbacksSent: number;
  readonly callbacksFailed: number;
}

export interface FaultControls extends FaultSettings {
  readonly counters: SimulatorCounters;
  /** Applies a partial patch, validated like the HTTP endpoint; throws `RangeError` on bad input. */
  set(patch: Partial<FaultSettings>): void;
  snapshot(): FaultSettings & { counters: SimulatorCounters };
}

export function defaultSettings(options: {
  readonly seed?: number;
  readonly statusDelayMs?: number;
}): FaultSettings {
  return {
    rateLimitPerSecond: null,
    failNext: [],
    probabilities: { timeoutAfterAccept: 0, timeoutBeforeAccept: 0, status500: 0, status429: 0 },
    seed: options.seed ?? 1,
    randomTimeoutMs: 15_000,
    callbacksEnabled: true,
    statusDelayMs: options.statusDelayMs ?? 50,
    autoAdvance: true,
    deliveryFailures: [{ toSuffix: '0000', status: 'undelivered', errorCode: 30003 }],
    listingStatus: null,
  };
}

class TokenBucket {
  #tokens: number;
  #last: number;
  readonly #capacity: number;
  constructor(
    readonly rate: number,
    now: number,
  ) {
    // A fractional rate still needs room for one whole token.
    this.#capacity = Math.max(1, rate);
    this.#tokens = this.#capacity;
    this.#last = now;
  }
  /** `undefined` when a token was taken, else whole seconds until the next one (≥ 1). */
  take(now: number): number | undefined {
    if (now > this.#last) {
      this.#tokens = Math.min(this.#capacity, this.#tokens + ((now - this.#last) / 1000) * this.rate);
      this.#last = now;
    }
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return undefined;
    }
    return Math.max(1, Math.ceil((1 - this.#tokens) / this.rate));
  }
}

export class FaultState implements FaultControls {
  #settings: FaultSettings;
  #bucket: TokenBucket | undefined;
  #random: () => number;
  readonly #clock: () => number;
  mutableCounters = zeroCounters();

  constructor(settings: FaultSettings, clock: () => number) {
    this.#settings = settings;
    this.#clock = clock;
    this.#random = prng(settings.seed);
  }

  get rateLimitPerSecond(): number | null {
    return this.#settings.rateLimitPerSecond;
  }
  set rateLimitPerSecond(value: number | null) {
    if (value !== null && !(Number.isFinite(value) && value > 0))
      throw new RangeError('rateLimitPerSecond must be > 0 or null');
    this.#settings.rateLimitPerSecond = value;
    this.#bucket = value === null ? undefined : new TokenBucket(value, this.#clock());
  }
  get failNext(): FailNextFault[] {
    return this.#settings.failNext;
  }
  set failNext(value: FailNextFault[]) {
    if (!Array.isArray(value)) throw new RangeError('failNext must be an array');
    this.#settings.failNext = value.map(validateFault);
  }
  get probabilities(): FaultProbabilities {
    return this.#settings.probabilities;
  }
  set probabilities(value: Partial<FaultProbabilities>) {
    this.#settings.probabilities = mergeProbabilities(this.#settings.probabilities, value);
  }
  get seed(): number {
    return this.#settings.seed;
  }
  set seed(value: number) {
    if (!Number.isInteger(value)) throw new RangeError('seed must be an integer');
    this.#settings.seed = value;
    this.#random = prng(value);
  }
  get randomTimeoutMs(): number {
    return this.#settings.randomTimeoutMs;
  }
  set randomTimeoutMs(value: number) {
    this.#settings.randomTimeoutMs = validDelay(value, 'randomTimeoutMs');
  }
  get callbacksEnabled(): boolean {
    return this.#settings.callbacksEnabled;
  }
  set callbacksEnabled(value: boolean) {
    if (typeof value !== 'boolean') throw new RangeError('callbacksEnabled must be a boolean');
    this.#settings.callbacksEnabled = value;
  }
  get statusDelayMs(): number {
    return this.#settings.statusDelayMs;
  }
  set statusDelayMs(value: number) {
    this.#settings.statusDelayMs = validDelay(value, 'statusDelayMs');
  }
  get autoAdvance(): boolean {
    return this.#settings.autoAdvance;
  }
  set autoAdvance(value: boolean) {
    if (typeof value !== 'boolean') throw new RangeError('autoAdvance must be a boolean');
    this.#settings.autoAdvance = value;
  }
  get deliveryFailures(): DeliveryFailureRule[] {
    return this.#settings.deliveryFailures;
  }
  set deliveryFailures(value: DeliveryFailureRule[]) {
    if (!Array.isArray(value)) throw new RangeError('deliveryFailures must be an array');
    this.#settings.deliveryFailures = value.map((rule) => {
      if (
        typeof rule !== 'object' ||
        rule === null ||
        typeof rule.toSuffix !== 'string' ||
        (rule.status !== 'undelivered' && rule.status !== 'failed') ||
        !Number.isInteger(rule.errorCode)
      ) {
        throw new RangeError(
          'deliveryFailures entries need toSuffix, status (undelivered|failed), errorCode',
        );
      }
      return { toSuffix: rule.toSuffix, status: rule.status, errorCode: rule.errorCode };
    });
  }
  get listingStatus(): number | null {
    return this.#settings.listingStatus;
  }
  set listingStatus(value: number | null) {
    if (value !== null && !(Number.isInteger(value) && value >= 400 && value <= 599)) {
      throw new RangeError('listingStatus must be a 4xx/5xx status or null');
    }
    this.#settings.listingStatus = value;
  }
  get counters(): SimulatorCounters {
    return { ...this.mutableCounters };
  }

  set(patch: Partial<FaultSettings>): void {
    if (typeof patch !== 'object' || patch === null || Array.isArray(patch))
      throw new RangeError('expected an object');
    const known: (keyof FaultSettings)[] = [
      'rateLimitPerSecond',
      'failNext',
      'probabilities',
      'seed',
      'randomTimeoutMs',
      'callbacksEnabled',
      'statusDelayMs',
      'autoAdvance',
      'deliveryFailures',
      'listingStatus',
    ];
    for (const key of Object.keys(patch)) {
      if (!(known as string[]).includes(key)) throw new RangeError(`unknown setting: ${key}`);
    }
    // Validate everything on a scratch copy first, so a bad patch changes nothing.
    const scratch = new FaultState(structuredClone(this.#settings), this.#clock);
    Object.assign(scratch, patch);
    Object.assign(this, patch);
  }

  snapshot(): FaultSettings & { counters: SimulatorCounters } {
    return { ...structuredClone(this.#settings), counters: this.counters };
  }

  /** `undefined` = a token was available (or no limit); else the Retry-After in seconds. */
  takeToken(): number | undefined {
    return this.#bucket?.take(this.#clock());
  }

  nextFault(): FailNextFault | undefined {
    const queued = this.#settings.failNext.shift();
    if (queued !== undefined) return queued;
    const p = this.#settings.probabilities;
    if (p.timeoutAfterAccept + p.timeoutBeforeAccept + p.status500 + p.status429 === 0) return undefined;
    const r = this.#random();
    let edge = p.timeoutAfterAccept;
    if (r < edge) return { kind: 'timeout_after_accept', delayMs: this.#settings.randomTimeoutMs };
    edge += p.timeoutBeforeAccept;
    if (r < edge) return { kind: 'timeout_before_accept', delayMs: this.#settings.randomTimeoutMs };
    edge += p.status500;
    if (r < edge) return { kind: 'status', status: 500 };
    edge += p.status429;
    if (r < edge) return { kind: 'status', status: 429, retryAfterSeconds: 1 };
    return undefined;
  }
}

export function zeroCounters(): { -readonly [K in keyof SimulatorCounters]: number } {
  return {
    createCalls: 0,
    accepted: 0,
    rateLimited: 0,
    faultsInjected: 0,
    callbacksSent: 0,
    callbacksFailed: 0,
  };
}

function validateFault(fault: unknown): FailNextFault {
  if (typeof fault !== 'object' || fault === null)
    throw new RangeError('each failNext entry must be an object');
  const f = fault as Record<string, unknown>;
  if (f.kind !== 'status') {
    const transport = validateTransportFault(f);
    if (!transport) throw new RangeError('unknown fault kind');
    return transport;
  }
  const common = validateStatusFields(f);
  if (f.code !== undefined && !Number.isInteger(f.code))
    throw new RangeError('status fault code must be an integer');
  return {
    kind: 'status',
    status: common.status,
    ...(f.code === undefined ? {} : { code: f.code as number }),
    ...(common.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: common.retryAfterSeconds }),
  };
}
