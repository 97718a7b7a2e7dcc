import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ConflictException,
  CreateScheduleCommand,
  type CreateScheduleCommandInput,
  DeleteScheduleCommand,
  GetScheduleCommand,
  ListSchedulesCommand,
  ResourceNotFoundException,
  SchedulerClient,
  ValidationException,
} from '@aws-sdk/client-scheduler';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSchedulerStandIn } from '../../local/scheduler/server.ts';
import { drain, LOCAL_CREDENTIALS, startSqs } from '../helpers/sqs.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const CREDENTIALS = LOCAL_CREDENTIALS;
const ROLE_ARN = 'arn:aws:iam::123456789012:role/scheduler-to-sqs';
const GROUP = 'notice-retries';

/** `at()` for `ms` from now, rounded up to a whole second as the production adapter does. */
function atIn(ms: number): { at: number; expression: string } {
  const at = Math.ceil((Date.now() + ms) / 1000) * 1000;
  return { at, expression: `at(${new Date(at).toISOString().slice(0, 19)})` };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('EventBridge Scheduler stand-in', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  let sqsEndpoint: string;
  let sqs: SQSClient;
  let queueUrl: string;
  let queueArn: string;
  let logLines: string[];

  beforeEach(async () => {
    const local = await startSqs();
    cleanups.push(() => local.close());
    sqsEndpoint = local.endpoint;
    sqs = new SQSClient({ endpoint: sqsEndpoint, region: 'us-east-1', credentials: CREDENTIALS });
    cleanups.push(async () => sqs.destroy());
    queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'email-intents' }))).QueueUrl ?? '';
    const attributes = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
    );
    queueArn = attributes.Attributes?.QueueArn ?? '';
    logLines = [];
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function start(options: { stateFile?: string; clock?: () => number } = {}) {
    const standIn = await startSchedulerStandIn({
      sqsEndpoint,
      tickMs: 100,
      log: (line) => logLines.push(line),
      ...options,
    });
    cleanups.push(() => standIn.close());
    const client = new SchedulerClient({
      endpoint: standIn.endpoint,
      region: 'us-east-1',
      credentials: CREDENTIALS,
    });
    cleanups.push(async () => client.destroy());
    return { standIn, client };
  }

  function input(name: string, expression: string, overrides: Partial<CreateScheduleCommandInput> = {}) {
    return {
      Name: name,
      GroupName: GROUP,
      ScheduleExpression: expression,
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      ActionAfterCompletion: 'DELETE',
      Target: {
        Arn: queueArn,
        RoleArn: ROLE_ARN,
        Input: JSON.stringify({ noticeId: name, channel: 'email', attempt: 2 }),
        RetryPolicy: { MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 3600 },
      },
      ...overrides,
    } satisfies CreateScheduleCommandInput;
  }

  it('binds 127.0.0.1 on an ephemeral port', async () => {
    const { standIn } = await start();

    expect(standIn.endpoint).toBe(`http://127.0.0.1:${standIn.port}`);
    expect(standIn.port).toBeGreaterThan(0);
  });

  it('fires an at() schedule once, with Input as the body, then deletes it', async () => {
    const { standIn, client } = await start();
    const { at, expression } = atIn(1500);
    const request = input('n1-email-a2', expression);

    const created = await client.send(new CreateScheduleCommand(request));
    expect(created.ScheduleArn).toBe(
      `arn:aws:scheduler:us-east-1:123456789012:schedule/${GROUP}/n1-email-a2`,
    );
    const got = await client.send(new GetScheduleCommand({ Name: 'n1-email-a2', GroupName: GROUP }));
    expect(got).toMatchObject({
      Arn: created.ScheduleArn,
      Name: 'n1-email-a2',
      GroupName: GROUP,
      ScheduleExpression: expression,
      ScheduleExpressionTimezone: 'UTC',
      State: 'ENABLED',
      ActionAfterCompletion: 'DELETE',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: {
        Arn: queueArn,
        RoleArn: ROLE_ARN,
        Input: request.Target.Input,
        RetryPolicy: request.Target.RetryPolicy,
      },
    });
    // Timestamps travel as epoch seconds; the SDK turns them into Dates.
    expect(got.CreationDate).toBeInstanceOf(Date);
    expect(Math.abs((got.CreationDate?.getTime() ?? 0) - Date.now())).toBeLessThan(5_000);

    const messages = await drain(sqs, queueUrl, 6_000, 1);
    const receivedAt = Date.now();
    expect(messages.map((m) => m.Body)).toEqual([request.Target.Input]);
    expect(receivedAt).toBeGreaterThanOrEqual(at);
    expect(await drain(sqs, queueUrl, 1_000)).toEqual([]);

    expect(
      await rejection(client.send(new GetScheduleCommand({ Name: 'n1-email-a2', GroupName: GROUP }))),
    ).toBeInstanceOf(ResourceNotFoundException);
    expect(standIn.schedules()).toEqual([]);
    expect(standIn.fired()).toEqual([
      expect.objectContaining({ name: 'n1-email-a2', groupName: GROUP, outcome: 'sent', attempts: 1 }),
    ]);
  });

  it('answers a duplicate name in the group with a ConflictException (409), not in another group', async () => {
    const { client } = await start();
    const { expression } = atIn(600_000);
    await client.send(new CreateScheduleCommand(input('dup', expression)));

    const error = await rejection(client.send(new CreateScheduleCommand(input('dup', expression))));

    expect(error).toBeInstanceOf(ConflictException);
    expect((error as ConflictException).$metadata.httpStatusCode).toBe(409);
    expect((error as ConflictException).message).toContain('dup');
    await expect(
      client.send(new CreateScheduleCommand(input('dup', expression, { GroupName: 'other-group' }))),
    ).resolves.toHaveProperty('ScheduleArn');
  });

  it.each([
    ['a rate() expression', { ScheduleExpression: 'rate(5 minutes)' }],
    ['a cron() expression', { ScheduleExpression: 'cron(0 12 * * ? *)' }],
    ['an impossible date', { ScheduleExpression: 'at(2030-02-30T10:00:00)' }],
    ['a zone with an offset', { ScheduleExpressionTimezone: 'Europe/Paris' }],
    ['a bad group name', { GroupName: 'no spaces' }],
    ['no FlexibleTimeWindow', { FlexibleTimeWindow: undefined }],
    [
      'a Lambda target',
      { Target: { Arn: 'arn:aws:lambda:us-east-1:123456789012:function:f', RoleArn: ROLE_ARN } },
    ],
    [
      'a RetryPolicy out of range',
      {
        Target: {
          Arn: 'arn:aws:sqs:us-east-1:123456789012:q',
          RoleArn: ROLE_ARN,
          RetryPolicy: { MaximumRetryAttempts: 186 },
        },
      },
    ],
  ] as const)('rejects %s with a ValidationException (400)', async (_label, overrides) => {
    const { client, standIn } = await start();

    const error = await rejection(
      client.send(
        new CreateScheduleCommand(
          input('invalid', atIn(600_000).expression, overrides as Partial<CreateScheduleCommandInput>),
        ),
      ),
    );

    expect(error).toBeInstanceOf(ValidationException);
    expect((error as ValidationException).$metadata.httpStatusCode).toBe(400);
    expect(standIn.schedules()).toEqual([]);
  });

  it('answers Get and Delete of a missing schedule with ResourceNotFoundException', async () => {
    const { client } = await start();
    await client.send(new CreateScheduleCommand(input('kept', atIn(600_000).expression)));

    expect(
      await rejection(client.send(new GetScheduleCommand({ Name: 'kept', GroupName: 'other-group' }))),
    ).toBeInstanceOf(ResourceNotFoundException);
    expect(
      await rejection(client.send(new DeleteScheduleCommand({ Name: 'missing', GroupName: GROUP }))),
    ).toBeInstanceOf(ResourceNotFoundException);
    await client.send(new DeleteScheduleCommand({ Name: 'kept', GroupName: GROUP }));
    expect(
      await rejection(client.send(new GetScheduleCommand({ Name: 'kept', GroupName: GROUP }))),
    ).toBeInstanceOf(ResourceNotFoundException);
  });

  it('lists schedules by group and name prefix, a page at a time', async () => {
    const { client } = await start();
    const { expression } = atIn(600_000);
    for (const name of ['n1-email-a1', 'n1-sms-a1', 'n2-email-a1']) {
      await client.send(new CreateScheduleCommand(input(name, expression)));
    }
    await client.send(new CreateScheduleCommand(input('n1-email-a1', expression, { GroupName: 'other' })));

    const first = await client.send(
      new ListSchedulesCommand({ GroupName: GROUP, NamePrefix: 'n1-', MaxResults: 1 }),
    );
    const second = await client.send(
      new ListSchedulesCommand({
        GroupName: GROUP,
        NamePrefix: 'n1-',
        MaxResults: 1,
        NextToken: first.NextToken,
      }),
    );
    const all = await client.send(new ListSchedulesCommand({}));

    expect(first.Schedules?.map((s) => s.Name)).toEqual(['n1-email-a1']);
    expect(first.Schedules?.[0]).toMatchObject({
      GroupName: GROUP,
      State: 'ENABLED',
      Target: { Arn: queueArn },
    });
    expect(second.Schedules?.map((s) => s.Name)).toEqual(['n1-sms-a1']);
    expect(second.NextToken).toBeUndefined();
    expect(all.Schedules).toHaveLength(4);
  });

  it('fires an at() in the past on the next tick; NONE keeps the schedule, fired once', async () => {
    let now = Date.parse('2030-01-01T00:00:00Z');
    const { standIn, client } = await start({ clock: () => now });

    await client.send(
      new CreateScheduleCommand(input('past', 'at(2029-12-31T23:00:00)', { ActionAfterCompletion: 'NONE' })),
    );
    await standIn.tick();
    now += 60_000;
    await standIn.tick();

    expect((await drain(sqs, queueUrl, 1_500)).length).toBe(1);
    await expect(
      client.send(new GetScheduleCommand({ Name: 'past', GroupName: GROUP })),
    ).resolves.toMatchObject({
      ActionAfterCompletion: 'NONE',
    });
    expect(standIn.schedules()).toEqual([
      expect.objectContaining({ name: 'past', completed: true, attempts: 1 }),
    ]);
  });

  it('does not fire a schedule before its at() nor a DISABLED one', async () => {
    let now = Date.parse('2030-01-01T00:00:00Z');
    const { standIn, client } = await start({ clock: () => now });
    await client.send(new CreateScheduleCommand(input('later', 'at(2030-01-01T00:00:01)')));
    await client.send(
      new CreateScheduleCommand(input('off', 'at(2029-01-01T00:00:00)', { State: 'DISABLED' })),
    );

    now += 999;
    await standIn.tick();
    expect(standIn.fired()).toEqual([]);
    now += 1;
    await standIn.tick();

    expect(standIn.fired().map((f) => f.name)).toEqual(['later']);
    expect(standIn.schedules().map((s) => s.name)).toEqual(['off']);
  });

  it('retries a failed send on a later tick and drops it when the retries run out', async () => {
    const { standIn, client } = await start();
    const missingQueue = queueArn.replace(/email-intents$/, 'created-later');
    const target = (arn: string, retries: number) => ({
      Target: {
        Arn: arn,
        RoleArn: ROLE_ARN,
        Input: '{"noticeId":"secret-free"}',
        RetryPolicy: { MaximumRetryAttempts: retries, MaximumEventAgeInSeconds: 3600 },
      },
    });
    await client.send(
      new CreateScheduleCommand(input('retried', atIn(-1000).expression, target(missingQueue, 5))),
    );
    await client.send(
      new CreateScheduleCommand(input('dropped', atIn(-1000).expression, target(missingQueue, 0))),
    );

    await standIn.tick();
    const laterUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'created-later' }))).QueueUrl ?? '';
    const messages = await drain(sqs, laterUrl, 6_000, 1);

    expect(messages.map((m) => m.Body)).toEqual(['{"noticeId":"secret-free"}']);
    expect(standIn.fired()).toEqual([
      expect.objectContaining({ name: 'dropped', outcome: 'dropped', attempts: 1 }),
      expect.objectContaining({ name: 'retried', outcome: 'sent', attempts: 2 }),
    ]);
    expect(standIn.schedules()).toEqual([]);
    expect(logLines).toEqual([expect.stringContaining(`dropped ${GROUP}/dropped after 1 attempt(s)`)]);
    expect(logLines.join('\n')).not.toContain('secret-free');
  });

  it('keeps schedules in stateFile across a stop and a start', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'scheduler-state-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const stateFile = join(dir, 'nested', 'schedules.json');
    const first = await start({ stateFile });
    const request = input('survivor', atIn(3000).expression);
    await first.client.send(new CreateScheduleCommand(request));
    await first.standIn.close();
    expect(JSON.parse(await readFile(stateFile, 'utf8')).schedules).toHaveLength(1);

    const second = await start({ stateFile });
    expect(second.standIn.schedules().map((s) => s.name)).toEqual(['survivor']);
    const messages = await drain(sqs, queueUrl, 8_000, 1);

    expect(messages.map((m) => m.Body)).toEqual([request.Target.Input]);
    expect(JSON.parse(await readFile(stateFile, 'utf8')).schedules).toEqual([]);
  });

  it('fires after the CLI process is killed with SIGKILL and restarted on the same stateFile', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'scheduler-cli-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const stateFile = join(dir, 'schedules.json');

    const spawnCli = async (): Promise<{ child: ChildProcess; endpoint: string }> => {
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          'local/scheduler/server.ts',
          '--port',
          '0',
          '--sqs',
          sqsEndpoint,
          '--state-file',
          stateFile,
        ],
        { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
      );
      cleanups.push(async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      });
      const endpoint = await new Promise<string>((resolve, reject) => {
        let out = '';
        const timeout = setTimeout(() => reject(new Error('CLI did not print its endpoint')), 15_000);
        child.stdout?.on('data', (chunk: Buffer) => {
          out += chunk.toString('utf8');
          const line = out.split('\n')[0];
          if (out.includes('\n') && line !== undefined) {
            clearTimeout(timeout);
            resolve(line.trim());
          }
        });
        child.once('exit', (code) => {
          clearTimeout(timeout);
          reject(new Error(`CLI exited early (${code})`));
        });
      });
      return { child, endpoint };
    };

    const first = await spawnCli();
    const client = new SchedulerClient({
      endpoint: first.endpoint,
      region: 'us-east-1',
      credentials: CREDENTIALS,
    });
    cleanups.push(async () => client.destroy());
    const request = input('killed', atIn(4000).expression);
    await client.send(new CreateScheduleCommand(request));
    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGKILL');
    await exited;

    await spawnCli();
    const messages = await drain(sqs, queueUrl, 10_000, 1);

    expect(messages.map((m) => m.Body)).toEqual([request.Target.Input]);
  });

  it('dropNextCreates (POST /__faults) accepts a create and then forgets it', async () => {
    const { standIn, client } = await start();
    const fault = await fetch(`${standIn.endpoint}/__faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ dropNextCreates: 1 }),
    });
    expect(await fault.json()).toEqual({ dropNextCreates: 1 });
    const lost = input('lost', atIn(-1000).expression);

    const created = await client.send(new CreateScheduleCommand(lost));
    expect(created.ScheduleArn).toContain('/lost');
    expect(
      await rejection(client.send(new GetScheduleCommand({ Name: 'lost', GroupName: GROUP }))),
    ).toBeInstanceOf(ResourceNotFoundException);
    await client.send(new CreateScheduleCommand(input('kept', atIn(600_000).expression)));
    expect(await drain(sqs, queueUrl, 1_500)).toEqual([]);

    const listing = (await (await fetch(`${standIn.endpoint}/__schedules`)).json()) as {
      schedules: Array<{ name: string; groupName: string; at: string }>;
    };
    expect(listing.schedules.map((s) => `${s.groupName}/${s.name}`)).toEqual([`${GROUP}/kept`]);
    expect(listing.schedules[0]?.at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/);
    expect(await (await fetch(`${standIn.endpoint}/__faults`)).json()).toEqual({ dropNextCreates: 0 });
    // The lost name is free again: re-creating it (what a reconciler would do) fires.
    await client.send(new CreateScheduleCommand(lost));
    expect((await drain(sqs, queueUrl, 3_000, 1)).map((m) => m.Body)).toEqual([lost.Target.Input]);
  });

  it('answers operations it does not implement with UnknownOperationException (404)', async () => {
    const { standIn } = await start();

    const res = await fetch(`${standIn.endpoint}/schedules/x`, { method: 'PUT', body: '{}' });

    expect(res.status).toBe(404);
    expect(res.headers.get('x-amzn-errortype')).toBe('UnknownOperationException');
    await res.arrayBuffer();
  });
});
