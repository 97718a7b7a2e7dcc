import { describe, expect, it } from 'vitest';
import {
  LOCAL_ACTOR,
  operatorActor,
  parseCancelRequest,
  parseResolutionRequest,
  parseSuppressionRequest,
} from '../../lambdas/edge/operator-requests.ts';
import { TEST_ACTOR } from '../helpers/ledger-properties.ts';

describe('operatorActor: one rule for transition records and suppression records', () => {
  it('the IAM principal when there is one; else the body actor; else local', () => {
    expect(operatorActor(TEST_ACTOR, undefined)).toEqual({ ok: true, value: TEST_ACTOR });
    expect(operatorActor(undefined, 'ops-7')).toEqual({ ok: true, value: 'ops-7' });
    expect(operatorActor(undefined, undefined)).toEqual({ ok: true, value: 'local' });
    expect(LOCAL_ACTOR).toBe('local');
  });

  it('refuses a body actor beside an IAM principal: a signed caller cannot write another name', () => {
    expect(operatorActor(TEST_ACTOR, 'someone-else')).toEqual({
      ok: false,
      errors: [expect.objectContaining({ path: 'actor', code: 'not_allowed' })],
    });
  });

  it('every operator body takes the same optional actor, and refuses an address as one', () => {
    const parsed = [
      parseSuppressionRequest({ actor: 'ops-7' }),
      parseResolutionRequest({ outcome: 'accepted', reason: 'seen in console', actor: 'ops-7' }),
      parseCancelRequest({ reason: 'appointment cancelled', actor: 'ops-7' }),
    ];
    for (const result of parsed) expect(result).toMatchObject({ ok: true, value: { actor: 'ops-7' } });
    const refused = [
      parseSuppressionRequest({ actor: 'ada@example.com' }),
      parseResolutionRequest({ outcome: 'accepted', reason: 'seen in console', actor: 'ada@example.com' }),
      parseCancelRequest({ reason: 'appointment cancelled', actor: ' ops-7' }),
    ];
    for (const result of refused) {
      expect(result).toEqual({
        ok: false,
        errors: [expect.objectContaining({ path: 'actor', code: 'invalid_format' })],
      });
      expect(JSON.stringify(result)).not.toContain('ada@');
    }
  });

  it('a suppression body: no body is {}, free text is refused by name, an unknown field as unknown', () => {
    expect(parseSuppressionRequest(undefined)).toEqual({
      ok: true,
      value: { reason: undefined, actor: undefined },
    });
    expect(parseSuppressionRequest(null)).toMatchObject({ ok: true });
    expect(parseSuppressionRequest({ detail: 'patient phoned from her new number' })).toEqual({
      ok: false,
      errors: [expect.objectContaining({ path: 'detail', code: 'free_text_not_accepted' })],
    });
    expect(parseSuppressionRequest({ note: 'x' })).toEqual({
      ok: false,
      errors: [expect.objectContaining({ path: 'note', code: 'unknown_field' })],
    });
  });
});
