/**
 * Issue 21: what passes locally passes in AWS. The CDK code is synthesized with one grant left
 * out — the Http function's Query on the open index, the grant whose absence made
 * `GET /v1/notices` answer 500 in AWS — and the local stack, enforcing those policies, fails the
 * operator list exactly so: the router's generic 500, the AccessDenied named in the stack's log,
 * while everything the role still may do (intake, timelines, sending) works.
 * (test/e2e/operator.test.ts and local-stack.test.ts run the same routes under the committed,
 * complete policies.) In-process: the stack takes the policies as an option.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { NoticeFunction } from '../../lib/constructs/notice-function.ts';
import { type RolePolicies, readRolePolicies } from '../../local/iam/enforce.ts';
import { synthesizeRolePolicies } from '../../local/iam/synthesize.ts';
import { type LocalStack, startLocalStack } from '../../local/stack.ts';
import { uniqueTableName } from '../helpers/dynamodb.ts';
import { getTimeline, noticeBody, postNotice, SENT, testRecipient, waitFor } from './support.ts';

const PROBLEM = 'https://notice-ledger.dev/problems';

let stack: LocalStack;
let dataDir: string;
let withoutIndexGrant: RolePolicies;
let tableName: string;
const logged: string[] = [];

beforeAll(async () => {
  // The CDK code with the Http function's open-index grant left out (every other bind as written).
  const bindTable = NoticeFunction.prototype.bindTable;
  const spy = vi.spyOn(NoticeFunction.prototype, 'bindTable').mockImplementation(function (
    this: NoticeFunction,
    ledger,
    access,
  ) {
    return bindTable.call(
      this,
      ledger,
      this.node.id === 'Http' ? { ...access, openIndexQuery: false } : access,
    );
  });
  try {
    withoutIndexGrant = synthesizeRolePolicies({ variants: [{ email: 'ses', sms: 'twilio' }] });
  } finally {
    spy.mockRestore();
  }
  dataDir = await mkdtemp(join(tmpdir(), 'notice-ledger-iam-'));
  tableName = uniqueTableName('iam');
  stack = await startLocalStack(
    {
      PORT: '0',
      LEDGER_DATA_DIR: dataDir,
      AWS_ENDPOINT_URL_DYNAMODB: inject('ddbEndpoint'),
      LEDGER_TABLE_NAME: tableName,
      POWERTOOLS_LOG_LEVEL: 'ERROR',
      POWERTOOLS_METRICS_DISABLED: 'true',
    },
    { log: (line) => logged.push(line), iamPolicies: withoutIndexGrant },
  );
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('a grant left out of the CDK code fails the local route that needs it', () => {
  it('synthesizes the Http role without the index grant, and nothing else changed', () => {
    const sids = (policies: RolePolicies) => (policies.roles.http ?? []).map((s) => s.sid);
    expect(sids(readRolePolicies())).toContain('LedgerOpenIndex');
    expect(sids(withoutIndexGrant)).toEqual(
      sids(readRolePolicies()).filter((sid) => sid !== 'LedgerOpenIndex'),
    );
    expect(withoutIndexGrant.roles.reconciler).toEqual(readRolePolicies().roles.reconciler);
  });

  it('GET /v1/notices answers 500 as in AWS, the AccessDenied on the index in the log; intake, timelines and sending work', async () => {
    // Prepare
    const { email, phone } = testRecipient();
    const created = await postNotice(
      stack.apiUrl,
      noticeBody({ eventId: `evt_iam_${Date.now()}`, email, phone }),
    );
    const noticeId = created.json.noticeId as string;

    // Act
    const listed = await fetch(`${stack.apiUrl}/v1/notices`, { signal: AbortSignal.timeout(10_000) });
    const problem = (await listed.json()) as { type: string };

    // Assess: the operator list fails as it did in AWS; the role's other grants still hold.
    expect(created.status).toBe(202);
    expect(listed.status).toBe(500);
    expect(problem.type).toBe(`${PROBLEM}/internal-error`);
    const denial = `IAM: http may not dynamodb:Query on arn:aws:dynamodb:us-east-1:000000000000:table/${tableName}/index/open-due (implicit deny`;
    expect(logged.filter((line) => line.startsWith(denial))).toHaveLength(1);
    expect(logged.filter((line) => line.startsWith('IAM:'))).toHaveLength(1);
    const sent = await waitFor('both channels sent', async () => {
      const timeline = await getTimeline(stack.apiUrl, noticeId);
      return timeline.channels.every((c) => SENT.has(c.state)) ? timeline : undefined;
    });
    expect(sent.channels.map((c) => c.channel).sort()).toEqual(['email', 'sms']);
  });
});
