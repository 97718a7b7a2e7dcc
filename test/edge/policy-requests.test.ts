import { describe, expect, it } from 'vitest';
import { formatDuration, parseIsoDuration } from '../../lambdas/domain/fallback.ts';
import { parseNoticeRequest } from '../../lambdas/edge/notice-request.ts';
import { EXAMPLE_REQUEST } from '../helpers/fakes.ts';

/**
 * The delivery-policy fields at the edge (docs/architecture.md §12): `fallback` and
 * `recipient.timeZone`, refused 400 naming the field, never echoing what was sent.
 */

const body = { ...EXAMPLE_REQUEST, channels: ['email'] };
const fallback = { from: 'email', to: 'sms', within: 'PT10M' };

describe('fallback', () => {
  it('is parsed to channels and milliseconds, and carries the to destination on', () => {
    const parsed = parseNoticeRequest({ ...body, fallback });
    expect(parsed).toMatchObject({
      ok: true,
      request: {
        fallback: { from: 'email', to: 'sms', withinMs: 600_000 },
        recipient: { email: 'patient@example.com', phone: '+15551234567' },
      },
    });
  });

  it.each([
    [{ ...fallback, to: 'email' }, 'fallback.to', 'same_channel'],
    [{ ...fallback, from: 'sms', to: 'email' }, 'fallback.from', 'not_requested'],
    [{ ...fallback, within: 'PT30S' }, 'fallback.within', 'out_of_range'],
    [{ ...fallback, within: 'P8D' }, 'fallback.within', 'out_of_range'],
    [{ ...fallback, within: 'P1M' }, 'fallback.within', 'invalid_duration'],
    [{ ...fallback, within: '10 minutes' }, 'fallback.within', 'invalid_duration'],
    [{ from: 'email', within: 'PT10M' }, 'fallback.to', 'not_allowed'],
    [{ ...fallback, extra: 1 }, 'fallback.extra', 'unknown_field'],
  ])('refuses %j (400 %s %s)', (given, path, code) => {
    const parsed = parseNoticeRequest({ ...body, fallback: given });
    expect(parsed).toMatchObject({ ok: false, status: 400 });
    expect(parsed.ok ? [] : parsed.errors).toContainEqual(expect.objectContaining({ path, code }));
    expect(JSON.stringify(parsed)).not.toContain('10 minutes');
  });

  it('refuses a to channel already requested, and a missing or malformed to destination', () => {
    const both = parseNoticeRequest({ ...body, channels: ['email', 'sms'], fallback });
    expect(both.ok ? [] : both.errors).toContainEqual(
      expect.objectContaining({ path: 'fallback.to', code: 'already_requested' }),
    );
    const noPhone = parseNoticeRequest({
      ...body,
      recipient: { id: 'pat_1042', email: 'patient@example.com' },
      fallback,
    });
    expect(noPhone.ok ? [] : noPhone.errors).toContainEqual(
      expect.objectContaining({ path: 'recipient.phone', code: 'required' }),
    );
    const badPhone = parseNoticeRequest({
      ...body,
      recipient: { id: 'pat_1042', email: 'patient@example.com', phone: 'call me' },
      fallback,
    });
    expect(badPhone.ok).toBe(false);
    expect(JSON.stringify(badPhone)).not.toContain('call me');
  });

  it('reads and writes ISO 8601 durations of days, hours, minutes and seconds', () => {
    expect(parseIsoDuration('PT10M')).toBe(600_000);
    expect(parseIsoDuration('P1DT2H')).toBe(93_600_000);
    expect(parseIsoDuration('PT90S')).toBe(90_000);
    for (const bad of ['P', 'PT', 'P1Y', 'P1W', 'PT1.5M', '-PT1M', 'pt10m'])
      expect(parseIsoDuration(bad)).toBeUndefined();
    expect(formatDuration(600_000)).toBe('PT10M');
    expect(formatDuration(93_600_000)).toBe('P1DT2H');
  });
});

describe('recipient.timeZone', () => {
  it('takes an IANA zone and refuses an unknown one with invalid_time_zone, without echoing it', () => {
    const parsed = parseNoticeRequest({
      ...body,
      recipient: { ...body.recipient, timeZone: 'Australia/Adelaide' },
    });
    expect(parsed).toMatchObject({ ok: true, request: { recipient: { timeZone: 'Australia/Adelaide' } } });
    const refused = parseNoticeRequest({
      ...body,
      recipient: { ...body.recipient, timeZone: 'Mars/Olympus' },
    });
    expect(refused).toMatchObject({
      ok: false,
      status: 400,
      errors: [{ path: 'recipient.timeZone', code: 'invalid_time_zone' }],
    });
    expect(JSON.stringify(refused)).not.toContain('Olympus');
  });
});
