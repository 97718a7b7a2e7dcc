/**
 * A counting HTTP proxy in front of a local AWS service endpoint. The stack's SDK clients are
 * pointed at it through the standard `AWS_ENDPOINT_URL_<SERVICE>` variables, so every request
 * the unchanged runtime makes is seen on the wire, with no hook in lambdas/.
 *
 * DynamoDB: when `consumedCapacity` is on, `ReturnConsumedCapacity: TOTAL` is added to requests
 * that do not ask for it and the `ConsumedCapacity` of the answer is recorded (DynamoDB Local
 * reports it, index writes included). The SDK ignores the extra response field, and DynamoDB
 * Local does not verify signatures, so the rewrite is invisible to the runtime.
 *
 * Each request is attributed to a channel where its body says which one: the intent item's sort
 * key (`C#sms`), a suppression or gate key (`S#sms#…`, `G#sms`), or the SQS queue name.
 */
import { Agent, createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ProxiedService = 'dynamodb' | 'sqs' | 'scheduler';

export interface CountedRequest {
  readonly at: number;
  readonly service: ProxiedService;
  /** `PutItem`, `ReceiveMessage`, `CreateSchedule`, … */
  readonly operation: string;
  readonly status: number;
  readonly channel?: 'email' | 'sms' | undefined;
  /** DynamoDB: which item family the key names (`intent`, `suppression`, `gate`, `budget`), or `index` for a GSI query. */
  readonly target?: string | undefined;
  /** DynamoDB: capacity units the request consumed (with `consumedCapacity` on). */
  readonly capacityUnits?: number | undefined;
  /** SQS: the queue's name. */
  readonly queue?: string | undefined;
  /** SQS batch requests: entries sent; ReceiveMessage: messages returned. */
  readonly messages?: number | undefined;
  /**
   * The part of one request this record stands for: a TransactWriteItems over n items is
   * recorded as n records of 1/n each (capacity split alike), one per item's channel.
   * @default 1
   */
  readonly share?: number | undefined;
}

export interface CountingProxy {
  readonly endpoint: string;
  /** Everything seen so far, oldest first. */
  readonly records: CountedRequest[];
  /** Turns the DynamoDB capacity rewrite on or off (off costs a JSON parse less per request). */
  consumedCapacity: boolean;
  /** Records from `since` (epoch ms) to `until`. */
  between(since: number, until?: number): CountedRequest[];
  close(): Promise<void>;
}

/** Operations that accept `ReturnConsumedCapacity`. */
const CAPACITY_OPERATIONS = new Set([
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'Query',
  'Scan',
  'BatchGetItem',
  'BatchWriteItem',
  'TransactGetItems',
  'TransactWriteItems',
]);

type Json = Record<string, unknown>;

function parseJson(buffer: Buffer): Json | undefined {
  if (buffer.length === 0) return undefined;
  try {
    const value = JSON.parse(buffer.toString('utf8')) as unknown;
    return typeof value === 'object' && value !== null ? (value as Json) : undefined;
  } catch {
    return undefined;
  }
}

function channelOf(text: string | undefined): 'email' | 'sms' | undefined {
  if (text === undefined) return undefined;
  if (/(^|[#/-])sms($|[#/-])/.test(text)) return 'sms';
  if (/(^|[#/-])email($|[#/-])/.test(text)) return 'email';
  return undefined;
}

/** DynamoDB JSON attribute value → string, for the key attributes we look at. */
function stringAttr(value: unknown): string | undefined {
  if (typeof value === 'object' && value !== null && 'S' in value) {
    const s = (value as { S: unknown }).S;
    return typeof s === 'string' ? s : undefined;
  }
  return undefined;
}

type RequestParts = Pick<CountedRequest, 'channel' | 'target'>;

/** One entry per part of the request that names its own item (several for a transaction). */
function describeDynamo(operation: string, body: Json | undefined): RequestParts[] {
  if (!body) return [{}];
  if (operation === 'Query' || operation === 'Scan') {
    return [{ target: typeof body.IndexName === 'string' ? 'index' : 'table' }];
  }
  if (operation === 'BatchGetItem' || operation === 'BatchWriteItem') return [{ target: 'batch' }];
  if (operation === 'TransactWriteItems' && Array.isArray(body.TransactItems)) {
    const parts = (body.TransactItems as Json[]).map((entry) => {
      const action = Object.values(entry)[0] as Json | undefined;
      return describeItem(action ?? {});
    });
    return parts.length > 0 ? parts : [{}];
  }
  return [describeItem(body)];
}

function describeItem(body: Json): RequestParts {
  const key = (body.Key ?? body.Item) as Json | undefined;
  const pk = stringAttr(key?.pk);
  const sk = stringAttr(key?.sk);
  if (pk === undefined) return {};
  if (pk.startsWith('N#')) return { target: 'intent', channel: channelOf(sk) };
  if (pk.startsWith('S#')) return { target: 'suppression', channel: channelOf(pk) };
  if (pk.startsWith('G#')) return { target: 'gate', channel: channelOf(pk) };
  if (pk.startsWith('P#')) return { target: 'budget', channel: channelOf(pk) };
  return { target: 'other' };
}

function capacityOf(response: Json | undefined): number | undefined {
  const consumed = response?.ConsumedCapacity;
  const list = Array.isArray(consumed) ? consumed : consumed === undefined ? [] : [consumed];
  if (list.length === 0) return undefined;
  let total = 0;
  for (const entry of list) {
    const units = (entry as { CapacityUnits?: unknown }).CapacityUnits;
    if (typeof units === 'number') total += units;
  }
  return total;
}

/** Scheduler speaks REST-JSON: the operation is the method and path. */
function schedulerOperation(method: string, path: string): string {
  if (path.startsWith('/schedules/')) {
    if (method === 'POST') return 'CreateSchedule';
    if (method === 'DELETE') return 'DeleteSchedule';
    if (method === 'GET') return 'GetSchedule';
    if (method === 'PUT') return 'UpdateSchedule';
  }
  if (path.startsWith('/schedules')) return 'ListSchedules';
  return `${method} ${path}`;
}

function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

export async function startCountingProxy(options: {
  readonly service: ProxiedService;
  readonly upstream: string;
  readonly consumedCapacity?: boolean;
  /**
   * SQS: local-aws-sqs names its own origin in every QueueUrl, and the SDK sends a request to
   * the QueueUrl's host when its endpoint comes from the environment. Rewriting the origin both
   * ways keeps the stack talking through the proxy.
   */
  readonly rewriteOrigin?: boolean;
}): Promise<CountingProxy> {
  const upstream = new URL(options.upstream);
  // Keep-alive to the upstream, as the SDK keeps its own connections to us alive.
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const records: CountedRequest[] = [];
  const state = { consumedCapacity: options.consumedCapacity ?? false };
  const upstreamOrigin = upstream.origin;
  let proxyOrigin = '';
  const swap = (buffer: Buffer, from: string, to: string): Buffer =>
    options.rewriteOrigin && from !== '' && buffer.includes(from)
      ? Buffer.from(buffer.toString('utf8').replaceAll(from, to), 'utf8')
      : buffer;

  const server: Server = createServer((req, res) => {
    void (async () => {
      let body = swap(await readAll(req), proxyOrigin, upstreamOrigin);
      const method = req.method ?? 'GET';
      const target = req.headers['x-amz-target'];
      const operation =
        options.service === 'scheduler'
          ? schedulerOperation(method, (req.url ?? '/').split('?')[0] ?? '/')
          : typeof target === 'string'
            ? (target.split('.').pop() ?? target)
            : `${method} ${req.url ?? ''}`;

      // Bodies are parsed only where a figure needs them.
      const wantsBody = options.service === 'sqs' || options.service === 'dynamodb';
      const parsed = wantsBody ? parseJson(body) : undefined;
      let parts: Partial<CountedRequest>[] = [{}];
      if (options.service === 'dynamodb') {
        parts = describeDynamo(operation, parsed);
        if (
          state.consumedCapacity &&
          parsed &&
          CAPACITY_OPERATIONS.has(operation) &&
          parsed.ReturnConsumedCapacity === undefined
        ) {
          parsed.ReturnConsumedCapacity = 'TOTAL';
          body = Buffer.from(JSON.stringify(parsed), 'utf8');
        }
      } else if (options.service === 'sqs' && parsed) {
        const url = typeof parsed.QueueUrl === 'string' ? parsed.QueueUrl : undefined;
        const queue = url?.split('/').pop();
        parts = [
          {
            queue,
            channel: channelOf(queue),
            ...(Array.isArray(parsed.Entries) ? { messages: parsed.Entries.length } : {}),
          },
        ];
      }

      const headers = { ...req.headers, host: upstream.host, 'content-length': String(body.length) };
      delete headers['transfer-encoding'];
      const upstreamReq = request(
        {
          protocol: upstream.protocol,
          hostname: upstream.hostname,
          port: upstream.port,
          method,
          path: req.url,
          headers,
          agent,
        },
        (upstreamRes) => {
          void (async () => {
            const answer = swap(await readAll(upstreamRes), upstreamOrigin, proxyOrigin);
            const status = upstreamRes.statusCode ?? 502;
            let extra: Partial<CountedRequest> = {};
            const plain = upstreamRes.headers['content-encoding'] === undefined;
            if (options.service === 'dynamodb' && state.consumedCapacity && plain) {
              extra = { capacityUnits: capacityOf(parseJson(answer)) };
            } else if (options.service === 'sqs' && operation === 'ReceiveMessage' && plain) {
              const messages = parseJson(answer)?.Messages;
              extra = { messages: Array.isArray(messages) ? messages.length : 0 };
            }
            const at = Date.now();
            const share = 1 / parts.length;
            for (const part of parts) {
              records.push({
                at,
                service: options.service,
                operation,
                status,
                ...part,
                ...extra,
                ...(parts.length > 1
                  ? {
                      share,
                      ...(extra.capacityUnits !== undefined
                        ? { capacityUnits: extra.capacityUnits * share }
                        : {}),
                    }
                  : {}),
              } as CountedRequest);
            }
            const answerHeaders = { ...upstreamRes.headers, 'content-length': String(answer.length) };
            delete answerHeaders['transfer-encoding'];
            res.writeHead(status, answerHeaders);
            res.end(answer);
          })().catch(() => res.destroy());
        },
      );
      upstreamReq.on('error', () => res.destroy());
      upstreamReq.end(body);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  proxyOrigin = `http://127.0.0.1:${port}`;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    records,
    get consumedCapacity() {
      return state.consumedCapacity;
    },
    set consumedCapacity(value: boolean) {
      state.consumedCapacity = value;
    },
    between(since, until = Number.POSITIVE_INFINITY) {
      return records.filter((r) => r.at >= since && r.at <= until);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}
