/**
 * The fuzz layer through the real local stack (`npm start` as a child process, 127.0.0.1 only):
 *  1. issue 10's examples, sent as bytes: each refused with its status and codes, and afterwards
 *     the ledger table holds no row and no provider received anything; a body shorter than its
 *     Content-Length is answered 408 and closed by the gateway;
 *  2. generated requests (test/fuzz/requests.ts): no 5xx, problem+json with field paths, no
 *     canary in any answer or in anything the stack printed, and every row in the table belongs
 *     to a notice that was answered 202/200/409;
 *  3. the stack still takes a valid notice and sends it on both channels.
 *
 * FUZZ_STACK_RUNS (default 2 000) and FUZZ_SEED (default: random, printed) replay a run.
 */
import { Agent, request as httpRequest } from 'node:http';
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSesStore } from '../../local/ses/server.ts';
import { getTimeline, SENT, simulatorMessages, waitFor } from '../e2e/support.ts';
import { hostileExamples, validNotice } from '../helpers/hostile-examples.ts';
import { type StackProcess, startStackProcess, stopAllStacks } from '../helpers/local-stack.ts';
import { rawExchange } from '../helpers/raw-socket.ts';
import {
  answerViolation,
  describeRequest,
  echoedCanary,
  type FuzzAnswer,
  type FuzzRequest,
  requestArb,
} from './requests.ts';

const RUNS = Number(process.env.FUZZ_STACK_RUNS ?? 2_000);
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const IN_FLIGHT = 4;

let stack: StackProcess;
const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT });

beforeAll(async () => {
  stack = await startStackProcess();
});

afterAll(async () => {
  agent.destroy();
  await stopAllStacks();
});

/**
 * One request with exactly these bytes and headers (fetch would add and normalise some), on the
 * fuzz run's kept-alive sockets unless `via` says otherwise.
 */
function send(
  request: Pick<FuzzRequest, 'method' | 'target' | 'headers' | 'body'>,
  via: Agent | false = agent,
): Promise<FuzzAnswer> {
  const url = new URL(stack.apiUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: url.port,
        method: request.method,
        path: request.target,
        headers: {
          ...request.headers,
          ...(request.body ? { 'content-length': String(request.body.length) } : {}),
        },
        agent: via,
        timeout: 15_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, String(v)])),
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 15 s')));
    req.on('error', reject);
    req.end(request.body);
  });
}

async function tableItems(): Promise<Record<string, { S?: string }>[]> {
  const client = new DynamoDBClient({
    endpoint: stack.state.endpoints.dynamodb,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const items: Record<string, { S?: string }>[] = [];
  let startKey: Record<string, never> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({ TableName: stack.state.tableName, ExclusiveStartKey: startKey }),
    );
    items.push(...((page.Items ?? []) as Record<string, { S?: string }>[]));
    startKey = page.LastEvaluatedKey as Record<string, never> | undefined;
  } while (startKey);
  client.destroy();
  return items;
}

describe('through npm start', () => {
  it("refuses each of issue 10's examples, leaves no row and sends nothing; a short body gets 408", async () => {
    // Headers promising 100 bytes, 11 sent, then silence.
    const pending = rawExchange(
      stack.apiUrl,
      [
        'POST /v1/notices HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"eventId":',
      ],
      30_000,
    );
    const examples = hostileExamples(Date.now(), `st${SEED}`);
    for (const example of examples) {
      const answer = await send({
        method: example.method,
        target: example.path,
        headers: { 'content-type': example.contentType },
        body: example.body,
      });
      expect({ name: example.name, status: answer.status }).toEqual({
        name: example.name,
        status: example.status,
      });
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
      const problem = JSON.parse(answer.body) as { type: string; errors: { path: string; code: string }[] };
      expect(problem.type).toBe(example.type);
      const pairs = problem.errors.map((e) => [e.path, e.code]);
      for (const expected of example.errors) expect(pairs, example.name).toContainEqual(expected);
      for (const secret of example.secrets) expect(answer.body).not.toContain(secret);
    }

    const short = await pending;
    expect(short.response).toMatch(/^HTTP\/1\.1 408 /);
    expect(short.closedAfterMs).toBeLessThan(20_000);

    // No refused request left a row (intent or suppression) behind, and no provider heard of them.
    // The table's key check item (`K#keys`, written at start) is bookkeeping, not a row.
    expect((await tableItems()).filter((item) => !item.pk?.S?.startsWith('K#'))).toEqual([]);
    expect(await readSesStore(stack.state.endpoints.sesv2)).toEqual([]);
    expect(await simulatorMessages(stack.state.endpoints.twilio)).toEqual([]);
    const printed = stack.output();
    for (const secret of examples.flatMap((e) => e.secrets)) expect(printed).not.toContain(secret);
  }, 60_000);

  it(`${RUNS} generated requests: no 5xx, problem+json with paths, no echo, rows only for accepted notices`, async () => {
    console.log(`fuzz (stack): seed ${SEED}, ${RUNS} requests — replay with FUZZ_SEED=${SEED}`);
    const requests = fc.sample(requestArb(Date.now()), { seed: SEED, numRuns: RUNS });
    const accepted = new Set<string>();
    const fingerprints = new Set<string>();
    const statuses: Record<number, number> = {};
    const failures: string[] = [];
    const started = performance.now();
    let next = 0;
    const worker = async () => {
      while (next < requests.length) {
        const index = next++;
        const request = requests[index] as FuzzRequest;
        let answer: FuzzAnswer;
        try {
          answer = await send(request);
        } catch (error) {
          failures.push(`#${index} no answer (${(error as Error).message}): ${describeRequest(request)}`);
          continue;
        }
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        const violation = answerViolation(request, answer);
        if (violation)
          failures.push(`#${index} ${violation}: ${describeRequest(request)} → ${answer.body.slice(0, 300)}`);
        if (!answer.headers['content-type']?.startsWith('application/') || answer.body === '') continue;
        const json = JSON.parse(answer.body) as {
          noticeId?: string;
          results?: { status: number; noticeId?: string }[];
          destination?: { fingerprint?: string };
        };
        if ([200, 202, 409].includes(answer.status) && json.noticeId) accepted.add(json.noticeId);
        for (const r of json.results ?? [])
          if ([200, 202, 409].includes(r.status) && r.noticeId) accepted.add(r.noticeId);
        if (request.kind === 'suppression' && json.destination?.fingerprint)
          fingerprints.add(json.destination.fingerprint);
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `fuzz (stack): ${RUNS} requests in ${seconds.toFixed(1)} s; statuses ${JSON.stringify(statuses)}`,
    );
    expect(failures.slice(0, 5)).toEqual([]);

    const items = await tableItems();
    for (const item of items) {
      const pk = item.pk?.S ?? '';
      if (pk.startsWith('N#')) expect(accepted, `row ${pk} ${item.sk?.S}`).toContain(pk.slice(2));
      else if (pk.startsWith('S#')) {
        const fingerprint = pk.split('#')[2] as string;
        if (item.source?.S !== 'provider') expect(fingerprints, `suppression ${pk}`).toContain(fingerprint);
      }
    }
    const canaries = requests.flatMap((r) => r.canaries);
    expect(echoedCanary(canaries, stack.output())).toBeUndefined();
  }, 180_000);

  it('still takes a valid notice afterwards and sends it on both channels', async () => {
    const tag = `after${SEED}`;
    // A connection of its own: a kept-alive socket idle since the run may be closed by the
    // gateway's keep-alive timeout (5 s) just as it is reused ("socket hang up"), a race of the
    // client, not an answer of the stack.
    const answer = await send(
      {
        method: 'POST',
        target: '/v1/notices',
        headers: { 'content-type': 'application/json' },
        body: Buffer.from(JSON.stringify(validNotice(Date.now(), {}, tag))),
      },
      false,
    );
    expect(answer.status).toBe(202);
    const { noticeId } = JSON.parse(answer.body) as { noticeId: string };
    const timeline = await waitFor(
      'both channels sent',
      async () => {
        const t = await getTimeline(stack.apiUrl, noticeId);
        return t.channels.length === 2 && t.channels.every((c) => SENT.has(c.state)) ? t : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(timeline.channels.map((c) => c.channel)).toEqual(['email', 'sms']);
  }, 60_000);
});
