/**
 * Who a caller is (lambdas/contract/principals.ts, lambdas/edge/caller.ts): the normal form of a
 * principal ARN, the role map's entries, the role of a principal, and the settings read.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../lambdas/contract/config-error.ts';
import {
  invalidPrincipalEntries,
  matchesPrincipal,
  normalisePrincipal,
  parsePrincipalPattern,
} from '../../lambdas/contract/principals.ts';
import { callerDirectory, identifyCaller, roleOf } from '../../lambdas/edge/caller.ts';
import { iamAuthorizer } from '../../local/callers.ts';
import { apiEvent } from '../helpers/api-events.ts';

describe('normalisePrincipal: one principal per role, user or account', () => {
  it('takes an assumed-role session for its role, and drops a role’s or user’s path', () => {
    const cases: [string, string][] = [
      // A Lambda function's, an ECS task's and an IAM Identity Center user's sessions.
      [
        'arn:aws:sts::111122223333:assumed-role/intake-fn/intake-fn',
        'arn:aws:iam::111122223333:role/intake-fn',
      ],
      [
        'arn:aws:sts::111122223333:assumed-role/AWSReservedSSO_Ops_0123abcd/ada@example.com',
        'arn:aws:iam::111122223333:role/AWSReservedSSO_Ops_0123abcd',
      ],
      [
        'arn:aws:iam::111122223333:role/aws-reserved/sso.amazonaws.com/eu-west-1/AWSReservedSSO_Ops_0123abcd',
        'arn:aws:iam::111122223333:role/AWSReservedSSO_Ops_0123abcd',
      ],
      ['arn:aws:iam::111122223333:user/division/ops-lead', 'arn:aws:iam::111122223333:user/ops-lead'],
      ['arn:aws:iam::111122223333:root', 'arn:aws:iam::111122223333:root'],
      ['arn:aws:sts::111122223333:federated-user/bob', 'arn:aws:sts::111122223333:federated-user/bob'],
      // Other partitions keep theirs.
      ['arn:aws-cn:sts::111122223333:assumed-role/intake/s1', 'arn:aws-cn:iam::111122223333:role/intake'],
      ['arn:aws-us-gov:iam::111122223333:role/intake', 'arn:aws-us-gov:iam::111122223333:role/intake'],
    ];
    for (const [arn, normal] of cases) {
      expect(normalisePrincipal(arn), arn).toBe(normal);
      expect(normalisePrincipal(normal), `${normal} is its own normal form`).toBe(normal);
    }
  });

  it('names no principal for any other ARN or text', () => {
    for (const arn of [
      '',
      'ada',
      'arn:aws:lambda:us-east-1:111122223333:function:intake',
      'arn:aws:iam::111122223333:group/ops',
      'arn:aws:iam::1111:role/short-account',
      'arn:aws:sts::111122223333:assumed-role/no-session',
      'arn:aws:iam::111122223333:role/',
      'arn:aws:iam::111122223333:role/with space',
      'arn:aws:iam::111122223333:role/Ops_*',
    ]) {
      expect(normalisePrincipal(arn), arn).toBeUndefined();
    }
  });
});

describe('the role map', () => {
  it('an entry is a principal in any form, or a role or user name prefix ending in *', () => {
    const exact = parsePrincipalPattern('arn:aws:iam::111122223333:role/ops/on-call');
    const prefix = parsePrincipalPattern(
      'arn:aws:iam::111122223333:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_NoticeLedgerOperator_*',
    );
    expect(exact).toEqual({ principal: 'arn:aws:iam::111122223333:role/on-call', prefix: false });
    expect(prefix).toEqual({
      principal: 'arn:aws:iam::111122223333:role/AWSReservedSSO_NoticeLedgerOperator_',
      prefix: true,
    });
    const sso = normalisePrincipal(
      'arn:aws:sts::111122223333:assumed-role/AWSReservedSSO_NoticeLedgerOperator_9f8e7d/ada@example.com',
    ) as string;
    expect(matchesPrincipal(prefix as NonNullable<typeof prefix>, sso)).toBe(true);
    expect(matchesPrincipal(exact as NonNullable<typeof exact>, sso)).toBe(false);
    expect(
      matchesPrincipal(
        prefix as NonNullable<typeof prefix>,
        'arn:aws:iam::444455556666:role/AWSReservedSSO_NoticeLedgerOperator_1',
      ),
    ).toBe(false);
    expect(
      invalidPrincipalEntries([
        'arn:aws:iam::111122223333:role/ok',
        'arn:aws:sts::111122223333:assumed-role/Ops_*/x',
        'ops-team',
        'arn:aws:iam::111122223333:*',
      ]),
    ).toEqual(['arn:aws:sts::111122223333:assumed-role/Ops_*/x', 'ops-team', 'arn:aws:iam::111122223333:*']);
  });

  it('gives a principal the lesser role it is listed with, else submitter', () => {
    const directory = callerDirectory({
      OPERATOR_PRINCIPALS: ['arn:aws:iam::111122223333:role/*'],
      AUDITOR_PRINCIPALS: ['arn:aws:iam::111122223333:role/audit'],
      UNSIGNED_CALLER_PRINCIPAL: undefined,
    });
    expect(roleOf('arn:aws:iam::111122223333:role/ops', directory)).toBe('operator');
    expect(roleOf('arn:aws:iam::111122223333:role/audit', directory)).toBe('auditor');
    expect(roleOf('arn:aws:iam::111122223333:user/ops', directory)).toBe('submitter');
    expect(roleOf('arn:aws:iam::999999999999:role/ops', directory)).toBe('submitter');
  });

  it('stops at start naming every entry that is not a principal', () => {
    const read = () =>
      callerDirectory({
        OPERATOR_PRINCIPALS: ['arn:aws:iam::111122223333:role/ok', 'ops-team'],
        AUDITOR_PRINCIPALS: ['audit@example.com'],
        UNSIGNED_CALLER_PRINCIPAL: 'local',
      });
    expect(read).toThrow(ConfigError);
    expect(read).toThrow(
      /OPERATOR_PRINCIPALS: .*ops-team.*AUDITOR_PRINCIPALS: .*audit@example\.com.*UNSIGNED_CALLER_PRINCIPAL/,
    );
  });
});

describe('identifyCaller: what API Gateway vouched for, never what the client says', () => {
  const directory = callerDirectory({
    OPERATOR_PRINCIPALS: ['arn:aws:iam::111122223333:role/ops'],
    AUDITOR_PRINCIPALS: [],
    UNSIGNED_CALLER_PRINCIPAL: undefined,
  });

  it('reads requestContext.authorizer.iam.userArn, in the shape API Gateway passes', () => {
    const event = apiEvent({
      method: 'GET',
      path: '/v1/health',
      caller: 'arn:aws:sts::111122223333:assumed-role/ops/ada',
    });
    expect(event.requestContext).toMatchObject({
      authorizer: {
        iam: {
          accountId: '111122223333',
          callerId: expect.stringMatching(/^AROA[A-Z2-7]{17}:ada$/),
          userId: expect.stringMatching(/^AROA[A-Z2-7]{17}:ada$/),
          accessKey: expect.stringMatching(/^ASIA[A-Z2-7]{17}$/),
          cognitoIdentity: null,
          principalOrgId: null,
          userArn: 'arn:aws:sts::111122223333:assumed-role/ops/ada',
        },
      },
    });
    expect(identifyCaller(event, directory)).toEqual({
      ok: true,
      caller: { principal: 'arn:aws:iam::111122223333:role/ops', role: 'operator' },
    });
    expect(iamAuthorizer('arn:aws:iam::111122223333:root')?.iam.callerId).toBe('111122223333');
  });

  it('takes no header or body for a caller; without IAM context it is refused unless an unsigned caller is set', () => {
    const event = apiEvent({
      method: 'POST',
      path: '/v1/notices',
      headers: { 'x-notice-ledger-caller': 'arn:aws:iam::111122223333:role/ops' },
      body: { actor: 'arn:aws:iam::111122223333:role/ops' },
    });
    expect(identifyCaller(event, directory)).toEqual({ ok: false, reason: 'unsigned' });
    const local = { ...directory, unsigned: 'arn:aws:iam::111122223333:role/ops' };
    expect(identifyCaller(event, local)).toMatchObject({ ok: true, caller: { role: 'operator' } });
  });
});
