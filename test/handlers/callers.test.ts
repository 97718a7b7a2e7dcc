/**
 * Callers see what is theirs (docs/api.md "Callers"), through the http function's router with the
 * local stack's role map (test/helpers/http-harness.ts `TEST_CALLERS`): a submitter reads and
 * cancels the notices its principal submitted and learns nothing of others' (404 as for an
 * unknown id, a replay of another's event a 409 that names nothing), an operator acts on every
 * notice, an auditor reads everything and acts on nothing (403). Every route is checked for every
 * role against the routes' `roles` column.
 */
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../lambdas/contract/routes.ts';
import { callerDirectory } from '../../lambdas/edge/caller.ts';
import { LOCAL_AUDITOR_ROLE, LOCAL_OPERATOR_ROLE } from '../../local/callers.ts';
import { type ApiEventInput, apiEvent } from '../helpers/api-events.ts';
import { type Harness, harness } from '../helpers/http-harness.ts';

const PROBLEM = 'https://notice-ledger.dev/problems';

/** Two sessions of one service (one submitter), another service, an operator, an auditor. */
const A = 'arn:aws:sts::111111111111:assumed-role/lab-system/i-0a1b2c3d';
const A_OTHER_SESSION = 'arn:aws:sts::111111111111:assumed-role/lab-system/i-9f8e7d6c';
const A_ROLE = 'arn:aws:iam::111111111111:role/lab-system';
const B = 'arn:aws:sts::222222222222:assumed-role/billing-service/task-7';
const OPERATOR = 'arn:aws:sts::000000000000:assumed-role/notice-ledger-local-operator/ada';
const AUDITOR = 'arn:aws:sts::000000000000:assumed-role/notice-ledger-local-auditor/eve';
const PHONE_IN_PATH = '%2B15551234567';

function notice(eventId: string, channels: string[] = ['sms']) {
  return {
    eventId,
    eventType: 'lab-result-ready',
    recipient: { id: 'pat_1042', email: 'patient@example.com', phone: '+15551234567' },
    channels,
    template: { id: 'lab-result-ready', version: 'v3' },
    variables: { firstName: 'Ada' },
  };
}

const as = (caller: string, input: ApiEventInput): ApiEventInput => ({ ...input, caller });

async function submitAs(h: Harness, caller: string, eventId: string, channels?: string[]) {
  const reply = await h.call(
    as(caller, { method: 'POST', path: '/v1/notices', body: notice(eventId, channels) }),
  );
  expect(reply.status).toBe(202);
  return reply.json.noticeId as string;
}

const read = (h: Harness, caller: string, noticeId: string) =>
  h.call(as(caller, { method: 'GET', path: `/v1/notices/${noticeId}` }));
const cancel = (h: Harness, caller: string, noticeId: string) =>
  h.call(
    as(caller, { method: 'POST', path: `/v1/notices/${noticeId}/cancel`, body: { reason: 'not needed' } }),
  );

/** A notice id nobody submitted. */
const UNKNOWN_ID = 'ntc_aaaaaaaaaaaaaaaaaaaaaaaaaa';

describe('a submitter sees what its principal submitted, and nothing of anyone else’s', () => {
  it('records the principal as the submitter, a session as its role: every session of the service reads it', async () => {
    const h = harness();
    const noticeId = await submitAs(h, A, 'evt_a1', ['email', 'sms']);

    const reply = await read(h, A_OTHER_SESSION, noticeId);

    expect(reply.status).toBe(200);
    expect(reply.json.channels.map((c: { submittedBy: string }) => c.submittedBy)).toEqual([A_ROLE, A_ROLE]);
    // The session name (an instance id here; an e-mail address for an SSO user) is not kept.
    expect(JSON.stringify([...h.store.intents.values()])).not.toContain('i-0a1b2c3d');
    expect((await h.store.get(noticeId, 'sms'))?.submitter).toBe(A_ROLE);
  });

  it('another submitter reads and cancels it as an unknown id: the same 404, nothing changed', async () => {
    const h = harness();
    const noticeId = await submitAs(h, A, 'evt_a2');
    const before = await h.store.get(noticeId, 'sms');

    const readByB = await read(h, B, noticeId);
    const readUnknown = await read(h, B, UNKNOWN_ID);
    const cancelByB = await cancel(h, B, noticeId);
    const cancelUnknown = await cancel(h, B, UNKNOWN_ID);

    expect(readByB.status).toBe(404);
    expect(readByB.raw.body).toBe(readUnknown.raw.body);
    expect(readByB.raw.headers).toEqual(readUnknown.raw.headers);
    expect(cancelByB.status).toBe(404);
    expect(cancelByB.raw.body).toBe(cancelUnknown.raw.body);
    expect(await h.store.get(noticeId, 'sms')).toEqual(before);
    // Its own submitter cancels it.
    const own = await cancel(h, A, noticeId);
    expect(own.status).toBe(200);
    expect(own.json.channels).toEqual([{ channel: 'sms', state: 'failed', cancelled: true }]);
  });

  it('a replay of another’s event by a submitter is a 409 that names nothing, alone or in a batch; nothing is written', async () => {
    const h = harness();
    const noticeId = await submitAs(h, A, 'evt_a3', ['sms']);
    const before = [...h.store.intents.entries()];

    const same = await h.call(
      as(B, { method: 'POST', path: '/v1/notices', body: notice('evt_a3', ['sms']) }),
    );
    // Another channel beside A's: not added to A's notice.
    const more = await h.call(
      as(B, { method: 'POST', path: '/v1/notices', body: notice('evt_a3', ['email', 'sms']) }),
    );
    const other = await h.call(
      as(B, {
        method: 'POST',
        path: '/v1/notices',
        body: { ...notice('evt_a3'), variables: { firstName: 'Bo' } },
      }),
    );
    const batch = await h.call(
      as(B, {
        method: 'POST',
        path: '/v1/notices/batch',
        body: { notices: [notice('evt_a3'), notice('evt_b1')] },
      }),
    );

    for (const reply of [same, more, other]) {
      expect(reply.status).toBe(409);
      expect(reply.json).toEqual({
        type: `${PROBLEM}/notice-taken`,
        title: expect.any(String),
        status: 409,
        detail: expect.any(String),
      });
      expect(reply.raw.body).not.toContain(noticeId);
    }
    expect(other.raw.body).toBe(same.raw.body);
    expect(batch.status).toBe(200);
    expect(batch.json.results[0]).toEqual({ index: 0, status: 409, error: same.json });
    expect(batch.json.results[1]).toMatchObject({ index: 1, status: 202 });
    // Only B's own notice of the batch was written.
    const after = [...h.store.intents.entries()].filter(
      ([key]) => !key.startsWith(batch.json.results[1].noticeId),
    );
    expect(after).toEqual(before);
  });

  it('the same replay by its own submitter (another session) is the ordinary 200 duplicate', async () => {
    const h = harness();
    const noticeId = await submitAs(h, A, 'evt_a4');

    const replay = await h.call(
      as(A_OTHER_SESSION, { method: 'POST', path: '/v1/notices', body: notice('evt_a4') }),
    );

    expect(replay.status).toBe(200);
    expect(replay.json).toMatchObject({ noticeId, created: false });
  });

  it('a row recorded before submitters were is no submitter’s: 404 and the unrevealing 409; operators see it', async () => {
    const h = harness();
    const noticeId = await submitAs(h, A, 'evt_legacy');
    // As intake wrote it before callers were recorded: no submitter.
    const row = await h.store.get(noticeId, 'sms');
    h.store.intents.set(`${noticeId}|sms`, { ...(row as NonNullable<typeof row>), submitter: undefined });

    const readByA = await read(h, A, noticeId);
    const replayByA = await h.call(
      as(A, { method: 'POST', path: '/v1/notices', body: notice('evt_legacy') }),
    );
    const readByOperator = await read(h, OPERATOR, noticeId);

    expect(readByA.status).toBe(404);
    expect(replayByA.status).toBe(409);
    expect(replayByA.json.type).toBe(`${PROBLEM}/notice-taken`);
    expect(readByOperator.status).toBe(200);
    expect(readByOperator.json.channels[0].submittedBy).toBeNull();
  });

  it('refuses the operator routes (403, naming the role), and serves the API description', async () => {
    const h = harness();
    const noticeId = await submitAs(h, A, 'evt_a5');

    const refused = [
      await h.call(as(A, { method: 'GET', path: '/v1/notices' })),
      await h.call(
        as(A, {
          method: 'POST',
          path: `/v1/notices/${noticeId}/channels/sms/resolution`,
          body: { outcome: 'accepted', reason: 'seen' },
        }),
      ),
      await h.call(as(A, { method: 'GET', path: `/v1/suppressions/sms/${PHONE_IN_PATH}` })),
      await h.call(as(A, { method: 'PUT', path: `/v1/suppressions/sms/${PHONE_IN_PATH}` })),
      await h.call(as(A, { method: 'GET', path: '/v1/health' })),
    ];
    const description = await h.call(as(A, { method: 'GET', path: '/v1/openapi.json' }));

    for (const reply of refused) {
      expect(reply.status).toBe(403);
      expect(reply.json).toMatchObject({ type: `${PROBLEM}/forbidden`, role: 'submitter' });
    }
    expect(description.status).toBe(200);
    expect(h.store.suppressions.size).toBe(0);
  });
});

describe('an operator acts on every notice; an auditor reads every one and acts on none', () => {
  it('the operator reads, cancels and replays another’s notice; the act is recorded with the operator’s session', async () => {
    const h = harness();
    const noticeId = await submitAs(h, A, 'evt_o1');

    const timeline = await read(h, OPERATOR, noticeId);
    const replay = await h.call(
      as(OPERATOR, { method: 'POST', path: '/v1/notices', body: notice('evt_o1') }),
    );
    const cancelled = await cancel(h, OPERATOR, noticeId);

    expect(timeline.status).toBe(200);
    expect(timeline.json.channels[0].submittedBy).toBe(A_ROLE);
    expect(replay.status).toBe(200);
    expect(cancelled.status).toBe(200);
    expect(cancelled.json.channels).toEqual([{ channel: 'sms', state: 'failed', cancelled: true }]);
    expect((await h.store.get(noticeId, 'sms'))?.transitions.at(-1)).toMatchObject({
      reason: 'cancelled',
      actor: OPERATOR,
    });
  });

  it('the auditor reads the timeline, the list and suppressions; every act is 403 and changes nothing', async () => {
    const h = harness();
    const noticeId = await submitAs(h, A, 'evt_au1');
    const before = [...h.store.intents.entries()];

    const reads = [
      await read(h, AUDITOR, noticeId),
      await h.call(as(AUDITOR, { method: 'GET', path: '/v1/notices' })),
      await h.call(as(AUDITOR, { method: 'GET', path: '/v1/health' })),
    ];
    const suppression = await h.call(
      as(AUDITOR, { method: 'GET', path: `/v1/suppressions/sms/${PHONE_IN_PATH}` }),
    );
    const acts = [
      await cancel(h, AUDITOR, noticeId),
      await h.call(as(AUDITOR, { method: 'POST', path: '/v1/notices', body: notice('evt_au2') })),
      await h.call(
        as(AUDITOR, { method: 'POST', path: '/v1/notices/batch', body: { notices: [notice('evt_au3')] } }),
      ),
      await h.call(
        as(AUDITOR, {
          method: 'POST',
          path: `/v1/notices/${noticeId}/channels/sms/resolution`,
          body: { outcome: 'accepted', reason: 'seen' },
        }),
      ),
      await h.call(as(AUDITOR, { method: 'PUT', path: `/v1/suppressions/sms/${PHONE_IN_PATH}` })),
      await h.call(as(AUDITOR, { method: 'DELETE', path: `/v1/suppressions/sms/${PHONE_IN_PATH}` })),
    ];

    for (const reply of reads) expect(reply.status).toBe(200);
    expect(reads[0]?.json.channels[0].submittedBy).toBe(A_ROLE);
    expect(reads[1]?.json.items.map((i: { noticeId: string }) => i.noticeId)).toEqual([noticeId]);
    // Nothing recorded for this destination: the read is answered, not refused.
    expect(suppression.status).toBe(404);
    for (const reply of acts) {
      expect(reply.status).toBe(403);
      expect(reply.json).toMatchObject({ type: `${PROBLEM}/forbidden`, role: 'auditor' });
    }
    expect([...h.store.intents.entries()]).toEqual(before);
    expect(h.store.suppressions.size).toBe(0);
  });
});

describe('who may call each route: the roles column, for every role', () => {
  const concrete = (path: string) =>
    path
      .replace('{noticeId}', UNKNOWN_ID)
      .replace('{channel}', 'sms')
      .replace('{destination}', PHONE_IN_PATH);
  const callerOf = { submitter: A, operator: OPERATOR, auditor: AUDITOR } as const;

  it('answers 403 exactly where the route does not name the caller’s role', async () => {
    const h = harness();
    const routes = ROUTES.filter((r) => r.auth === 'iam');
    expect(routes.length).toBeGreaterThan(8);
    for (const route of routes) {
      for (const method of route.methods) {
        for (const [role, caller] of Object.entries(callerOf)) {
          const reply = await h.call(as(caller, { method, path: concrete(route.path), body: {} }));
          const allowed = (route.roles as readonly string[]).includes(role);
          expect(reply.status === 403, `${role} ${method} ${route.path}: ${reply.status}`).toBe(!allowed);
        }
      }
    }
  });

  it('refuses a request with no IAM context where no unsigned caller is set (AWS), and an ARN that is no principal', async () => {
    const aws = harness({
      callers: callerDirectory({
        OPERATOR_PRINCIPALS: [LOCAL_OPERATOR_ROLE],
        AUDITOR_PRINCIPALS: [LOCAL_AUDITOR_ROLE],
        UNSIGNED_CALLER_PRINCIPAL: undefined,
      }),
    });

    const unsigned = await aws.call({ method: 'GET', path: '/v1/health' });
    const unsignedSubmit = await aws.call({ method: 'POST', path: '/v1/notices', body: notice('evt_u1') });
    const event = apiEvent({ method: 'GET', path: '/v1/health' });
    const notAPrincipal = {
      ...event,
      requestContext: {
        ...event.requestContext,
        authorizer: { iam: { userArn: 'arn:aws:lambda:us-east-1:111111111111:function:intake' } },
      },
    };
    const lambdaArn = await aws.call(notAPrincipal);

    for (const reply of [unsigned, unsignedSubmit, lambdaArn]) {
      expect(reply.status).toBe(403);
      expect(reply.json).toMatchObject({ type: `${PROBLEM}/forbidden` });
      expect(reply.json.role).toBeUndefined();
    }
    expect(aws.store.intents.size).toBe(0);
  });
});
