/**
 * An AWS End User Messaging SMS (`pinpoint-sms-voice-v2`) simulator speaking the service's JSON
 * 1.0 protocol (`POST /`, `X-Amz-Target: PinpointSMSVoiceV2.<Operation>`), for the operations the
 * module uses: SendTextMessage, PutOptedOutNumber, DescribeOptedOutNumbers. The real AWS SDK
 * client is pointed at it with `AWS_ENDPOINT_URL_PINPOINT_SMS_VOICE_V2`; errors come back the way
 * the SDK reads them (`__type`, `Reason`), so the production adapter runs unchanged. Signatures
 * are not verified (it binds 127.0.0.1 only).
 *
 * Each accepted message produces the text events the service would publish to EventBridge
 * (`TEXT_PENDING`, then a final one), kept in an event log the local stack's feed hands to the
 * provider-events function (local/providers/eum.ts). Final event by destination suffix:
 * `9005` TEXT_INVALID · `9610` TEXT_BLOCKED · `0000` TEXT_UNREACHABLE · otherwise TEXT_DELIVERED.
 *
 * Fault controls (`POST /__faults`, or `faults.set`): `failNext` (an error by name and reason, a
 * timeout after or before acceptance), `spendLimitReached`, `eventsEnabled`, `eventDelayMs`.
 * `GET /__messages`, `GET /__events?after=<seq>`, `POST /__reset`.
 */

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { JsonFileState, readBody } from '../json-file-state.ts';
import { closeServer, listenOnLoopback } from '../loopback-server.ts';

export type EumFault =
  | { readonly kind: 'error'; readonly name: string; readonly reason?: string; readonly status?: number }
  /** Store the message (its events follow), then hold the answer: the client times out. */
  | { readonly kind: 'timeout_after_accept'; readonly delayMs: number }
  /** Hold, store nothing, then answer InternalServerException if anyone is still there. */
  | { readonly kind: 'timeout_before_accept'; readonly delayMs: number };

export interface EumFaults {
  failNext: EumFault[];
  /** Every send is refused with ServiceQuotaExceededException MONTHLY_SPEND_LIMIT_REACHED_FOR_TEXT. */
  spendLimitReached: boolean;
  /** False: no events are produced (as if the rule or the bus dropped them). */
  eventsEnabled: boolean;
  /** Delay between acceptance and the final event. */
  eventDelayMs: number;
}

export interface EumMessage {
  readonly messageId: string;
  readonly to: string;
  readonly body: string;
  readonly originationIdentity: string;
  readonly configurationSetName?: string;
  readonly context: Readonly<Record<string, string>>;
  readonly timeToLive?: number;
  readonly messageType?: string;
  readonly at: number;
}

export interface EumEvent {
  readonly seq: number;
  /** When the feed may deliver it (epoch ms). */
  readonly visibleAt: number;
  readonly event: {
    readonly version: '0';
    readonly id: string;
    readonly 'detail-type': string;
    readonly source: 'aws.sms-voice';
    readonly account: string;
    readonly time: string;
    readonly region: string;
    readonly resources: readonly string[];
    readonly detail: Readonly<Record<string, unknown>>;
  };
}

interface State {
  messages: EumMessage[];
  events: EumEvent[];
  optOuts: Record<string, Record<string, { at: number; endUser: boolean }>>;
  seq: number;
}

export interface EumSimulator {
  readonly endpoint: string;
  readonly faults: EumFaults & { set(patch: Partial<EumFaults>): void };
  readonly counters: { sendCalls: number; putOptOutCalls: number };
  messages(): EumMessage[];
  /** Events with `seq > after` that are visible now. */
  events(after?: number): EumEvent[];
  optedOut(list?: string): string[];
  reset(): void;
  close(): Promise<void>;
}

const FINAL_BY_SUFFIX: readonly [string, string][] = [
  ['9005', 'TEXT_INVALID'],
  ['9610', 'TEXT_BLOCKED'],
  ['0000', 'TEXT_UNREACHABLE'],
];
const E164 = /^\+?[1-9][0-9]{1,18}$/;
const TARGET_PREFIX = 'PinpointSMSVoiceV2.';
const ACCOUNT = '000000000000';

class ServiceError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

function defaultFaults(): EumFaults {
  return { failNext: [], spendLimitReached: false, eventsEnabled: true, eventDelayMs: 50 };
}

export async function startEumSimulator(
  options: { port?: number; storeFile?: string; region?: string; clock?: () => number } = {},
): Promise<EumSimulator> {
  const clock = options.clock ?? Date.now;
  const region = options.region ?? 'us-east-1';
  const state = new JsonFileState<State>(options.storeFile, () => ({
    messages: [],
    events: [],
    optOuts: {},
    seq: 0,
  }));
  const faults = defaultFaults();
  const counters = { sendCalls: 0, putOptOutCalls: 0 };
  const holds = new Set<NodeJS.Timeout>();

  const hold = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        holds.delete(timer);
        resolve();
      }, ms);
      holds.add(timer);
    });

  const event = (message: EumMessage, eventType: string, isFinal: boolean, at: number): EumEvent => {
    state.value.seq += 1;
    const status = eventType.replace(/^TEXT_/, '');
    return {
      seq: state.value.seq,
      visibleAt: at,
      event: {
        version: '0',
        id: randomUUID(),
        'detail-type': 'Text Message Delivery Status Updated',
        source: 'aws.sms-voice',
        account: ACCOUNT,
        time: new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z'),
        region,
        resources: [],
        detail: {
          eventType,
          eventVersion: '1.0',
          eventTimestamp: at,
          isFinal,
          originationPhoneNumber: message.originationIdentity,
          destinationPhoneNumber: message.to,
          isInternationalSend: false,
          messageId: message.messageId,
          messageRequestTimestamp: message.at,
          messageEncoding: 'GSM',
          messageType: message.messageType ?? 'TRANSACTIONAL',
          messageStatus: status,
          messageStatusDescription: status.toLowerCase(),
          context: message.context,
          totalMessageParts: 1,
          totalMessagePrice: 0.00581,
          totalCarrierFee: 0,
        },
      },
    };
  };

  const accept = (input: Record<string, unknown>): EumMessage => {
    const now = clock();
    const message: EumMessage = {
      messageId: randomUUID(),
      to: input.DestinationPhoneNumber as string,
      body: input.MessageBody as string,
      originationIdentity: input.OriginationIdentity as string,
      ...(typeof input.ConfigurationSetName === 'string'
        ? { configurationSetName: input.ConfigurationSetName }
        : {}),
      context: (input.Context as Record<string, string> | undefined) ?? {},
      ...(typeof input.TimeToLive === 'number' ? { timeToLive: input.TimeToLive } : {}),
      ...(typeof input.MessageType === 'string' ? { messageType: input.MessageType } : {}),
      at: now,
    };
    state.value.messages.push(message);
    if (faults.eventsEnabled) {
      const final = FINAL_BY_SUFFIX.find(([suffix]) => message.to.endsWith(suffix))?.[1] ?? 'TEXT_DELIVERED';
      state.value.events.push(event(message, 'TEXT_PENDING', false, now));
      state.value.events.push(event(message, final, true, now + faults.eventDelayMs));
    }
    state.save();
    return message;
  };

  const validateSend = (input: Record<string, unknown>) => {
    const fields: string[] = [];
    if (typeof input.DestinationPhoneNumber !== 'string' || !E164.test(input.DestinationPhoneNumber))
      fields.push('DestinationPhoneNumber');
    if (
      typeof input.MessageBody !== 'string' ||
      input.MessageBody.length < 1 ||
      input.MessageBody.length > 1600
    )
      fields.push('MessageBody');
    if (typeof input.OriginationIdentity !== 'string' || input.OriginationIdentity === '')
      fields.push('OriginationIdentity');
    if (
      input.MessageType !== undefined &&
      !['TRANSACTIONAL', 'PROMOTIONAL'].includes(input.MessageType as string)
    )
      fields.push('MessageType');
    const ttl = input.TimeToLive;
    if (ttl !== undefined && !(Number.isInteger(ttl) && (ttl as number) >= 5 && (ttl as number) <= 259_200))
      fields.push('TimeToLive');
    const context = input.Context;
    if (context !== undefined) {
      const entries = typeof context === 'object' && context !== null ? Object.entries(context) : [];
      const valid =
        entries.length <= 5 &&
        entries.every(
          ([k, v]) =>
            /^\S{1,100}$/.test(k) &&
            typeof v === 'string' &&
            v.length >= 1 &&
            v.length <= 800 &&
            v.trim() === v,
        );
      if (!valid) fields.push('Context');
    }
    if (fields.length > 0) {
      throw new ServiceError('ValidationException', 'invalid parameters', 400, {
        Reason: 'INVALID_PARAMETER',
        Fields: fields.map((name) => ({ Name: name, Message: 'invalid' })),
      });
    }
  };

  const sendTextMessage = async (input: Record<string, unknown>) => {
    counters.sendCalls += 1;
    const fault = faults.failNext.shift();
    if (fault?.kind === 'error') {
      throw new ServiceError(
        fault.name,
        fault.name,
        fault.status ?? (fault.name === 'InternalServerException' ? 500 : 400),
        {
          ...(fault.reason ? { Reason: fault.reason } : {}),
        },
      );
    }
    if (fault?.kind === 'timeout_before_accept') {
      await hold(fault.delayMs);
      throw new ServiceError('InternalServerException', 'internal error', 500);
    }
    validateSend(input);
    if (faults.spendLimitReached) {
      throw new ServiceError('ServiceQuotaExceededException', 'spend limit reached', 400, {
        Reason: 'MONTHLY_SPEND_LIMIT_REACHED_FOR_TEXT',
      });
    }
    const to = input.DestinationPhoneNumber as string;
    if (optedOutIn('Default').includes(to)) {
      throw new ServiceError('ConflictException', 'destination opted out', 400, {
        Reason: 'DESTINATION_PHONE_NUMBER_OPTED_OUT',
        ResourceType: 'opt-out-list',
        ResourceId: 'Default',
      });
    }
    const message = accept(input);
    if (fault?.kind === 'timeout_after_accept') await hold(fault.delayMs);
    return { MessageId: message.messageId };
  };

  const optedOutIn = (list: string) => Object.keys(state.value.optOuts[list] ?? {});
  const optOutListArn = (list: string) => `arn:aws:sms-voice:${region}:${ACCOUNT}:opt-out-list/${list}`;

  const putOptedOutNumber = (input: Record<string, unknown>) => {
    counters.putOptOutCalls += 1;
    const list = input.OptOutListName;
    const number = input.OptedOutNumber;
    if (typeof list !== 'string' || typeof number !== 'string' || !E164.test(number)) {
      throw new ServiceError('ValidationException', 'invalid parameters', 400, {
        Reason: 'INVALID_PARAMETER',
      });
    }
    const now = clock();
    state.value.optOuts[list] ??= {};
    const entries = state.value.optOuts[list];
    entries[number] ??= { at: now, endUser: false };
    state.save();
    return {
      OptOutListArn: optOutListArn(list),
      OptOutListName: list,
      OptedOutNumber: number,
      OptedOutTimestamp: (entries[number] as { at: number }).at / 1000,
      EndUserOptedOut: false,
    };
  };

  const describeOptedOutNumbers = (input: Record<string, unknown>) => {
    const list = input.OptOutListName;
    if (typeof list !== 'string') throw new ServiceError('ValidationException', 'OptOutListName required');
    const entries = state.value.optOuts[list] ?? {};
    const wanted = Array.isArray(input.OptedOutNumbers)
      ? (input.OptedOutNumbers as string[])
      : Object.keys(entries);
    return {
      OptOutListArn: optOutListArn(list),
      OptOutListName: list,
      OptedOutNumbers: wanted
        .filter((n) => entries[n])
        .map((n) => ({
          OptedOutNumber: n,
          OptedOutTimestamp: (entries[n] as { at: number }).at / 1000,
          EndUserOptedOut: (entries[n] as { endUser: boolean }).endUser,
        })),
    };
  };

  const operations: Record<string, (input: Record<string, unknown>) => unknown> = {
    SendTextMessage: sendTextMessage,
    PutOptedOutNumber: putOptedOutNumber,
    DescribeOptedOutNumbers: describeOptedOutNumbers,
  };

  const reply = (
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ) => {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', ...headers });
    res.end(JSON.stringify(body));
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname.startsWith('/__')) return control(req, res, url);
    const target = String(req.headers['x-amz-target'] ?? '');
    const text = await readBody(req);
    if (req.method !== 'POST' || !target.startsWith(TARGET_PREFIX)) {
      return reply(res, 400, { __type: 'UnknownOperationException', message: 'unknown operation' });
    }
    const operation = operations[target.slice(TARGET_PREFIX.length)];
    if (!operation)
      return reply(res, 400, { __type: 'UnknownOperationException', message: 'unknown operation' });
    try {
      const input = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
      reply(res, 200, await operation(input));
    } catch (error) {
      if (error instanceof ServiceError) {
        reply(
          res,
          error.status,
          {
            __type: `com.amazonaws.pinpointsmsvoicev2#${error.type}`,
            message: error.message,
            ...error.extra,
          },
          { 'x-amzn-errortype': error.type },
        );
        return;
      }
      reply(res, 400, { __type: 'SerializationException', message: 'body is not JSON' });
    }
  }

  async function control(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && url.pathname === '/__messages')
      return json(200, { messages: state.value.messages, counters });
    if (req.method === 'GET' && url.pathname === '/__events') {
      return json(200, { events: simulator.events(Number(url.searchParams.get('after') ?? 0)) });
    }
    if (req.method === 'POST' && url.pathname === '/__faults') {
      try {
        simulator.faults.set(JSON.parse(await readBody(req)) as Partial<EumFaults>);
        return json(200, faults);
      } catch (error) {
        return json(400, { error: error instanceof Error ? error.message : 'bad patch' });
      }
    }
    if (req.method === 'POST' && url.pathname === '/__reset') {
      simulator.reset();
      return json(200, {});
    }
    json(404, { error: 'not found' });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() =>
      reply(res, 500, { __type: 'InternalServerException', message: 'simulator error' }),
    );
  });
  const port = await listenOnLoopback(server, options.port);

  const simulator: EumSimulator = {
    endpoint: `http://127.0.0.1:${port}`,
    faults: Object.assign(faults, {
      set(patch: Partial<EumFaults>) {
        const known = ['failNext', 'spendLimitReached', 'eventsEnabled', 'eventDelayMs'];
        for (const key of Object.keys(patch))
          if (!known.includes(key)) throw new RangeError(`unknown setting: ${key}`);
        Object.assign(faults, patch);
      },
    }),
    counters,
    messages: () => state.value.messages.map((m) => ({ ...m })),
    events: (after = 0) => state.value.events.filter((e) => e.seq > after && e.visibleAt <= clock()),
    optedOut: (list = 'Default') => optedOutIn(list),
    reset() {
      state.value = { messages: [], events: [], optOuts: {}, seq: 0 };
      state.save();
      Object.assign(faults, defaultFaults());
      counters.sendCalls = 0;
      counters.putOptOutCalls = 0;
    },
    async close() {
      for (const timer of holds) clearTimeout(timer);
      holds.clear();
      await closeServer(server);
    },
  };
  return simulator;
}
