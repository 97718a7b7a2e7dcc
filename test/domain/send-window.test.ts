import { describe, expect, it } from 'vitest';
import {
  decideSendWindow,
  InvalidSendWindowError,
  isKnownTimeZone,
  nextWindowOpening,
  parseSendWindow,
  zonedInstant,
} from '../../lambdas/domain/send-window.ts';

/**
 * Send windows (docs/architecture.md §12): the opening of a recipient's window in their own
 * zone, across both DST changes, in zones with half-hour offsets, and for windows that cross
 * midnight. Expected instants are written out by hand in UTC.
 */

const day = parseSendWindow('08:00-21:00');
const at = (iso: string) => Date.parse(iso);
const opening = (now: string, zone: string, window = day) => {
  const t = nextWindowOpening(at(now), window, zone);
  return t === undefined ? undefined : new Date(t).toISOString();
};

describe('parseSendWindow', () => {
  it('reads HH:MM-HH:MM as minutes of the day', () => {
    expect(parseSendWindow('08:00-21:00')).toEqual({ opens: 480, closes: 1260, text: '08:00-21:00' });
    expect(parseSendWindow('21:00-08:00')).toEqual({ opens: 1260, closes: 480, text: '21:00-08:00' });
  });

  it.each(['8:00-21:00', '08:00', '24:00-08:00', '08:60-09:00', '08:00-08:00', '', '08:00–21:00'])(
    'refuses %j',
    (text) => {
      expect(() => parseSendWindow(text)).toThrow(InvalidSendWindowError);
    },
  );
});

describe('isKnownTimeZone', () => {
  it('knows IANA zones and refuses anything else', () => {
    expect(isKnownTimeZone('Europe/Berlin')).toBe(true);
    expect(isKnownTimeZone('Australia/Adelaide')).toBe(true);
    expect(isKnownTimeZone('UTC')).toBe(true);
    expect(isKnownTimeZone('Mars/Olympus_Mons')).toBe(false);
    expect(isKnownTimeZone('')).toBe(false);
    expect(isKnownTimeZone('+02:00x')).toBe(false);
  });
});

describe('nextWindowOpening', () => {
  it('is undefined inside the window, at its opening minute, and opens at the next 08:00 after it closes', () => {
    expect(opening('2026-06-10T12:00:00Z', 'Europe/Berlin')).toBeUndefined(); // 14:00 CEST
    expect(opening('2026-06-10T06:00:00Z', 'Europe/Berlin')).toBeUndefined(); // 08:00 CEST sharp
    expect(opening('2026-06-10T18:59:59Z', 'Europe/Berlin')).toBeUndefined(); // 20:59:59
    // 21:00 CEST: closed; tomorrow 08:00 CEST = 06:00Z.
    expect(opening('2026-06-10T19:00:00Z', 'Europe/Berlin')).toBe('2026-06-11T06:00:00.000Z');
    // 03:00 CEST: today's 08:00.
    expect(opening('2026-06-10T01:00:00Z', 'Europe/Berlin')).toBe('2026-06-10T06:00:00.000Z');
  });

  it('spring forward (Berlin, 29 March 2026, 02:00 → 03:00): the opening follows the local clock', () => {
    // 01:30 CET (+1) = 00:30Z; 08:00 is already CEST (+2): 06:00Z, 5 h 30 later not 6 h 30.
    expect(opening('2026-03-29T00:30:00Z', 'Europe/Berlin')).toBe('2026-03-29T06:00:00.000Z');
    // The evening before (22:00 CET = 21:00Z): the night has only 9 hours to 08:00 CEST.
    expect(opening('2026-03-28T21:00:00Z', 'Europe/Berlin')).toBe('2026-03-29T06:00:00.000Z');
    // A window opening inside the skipped hour opens when the clock jumps (03:00 CEST = 01:00Z).
    const skipped = parseSendWindow('02:30-21:00');
    expect(opening('2026-03-29T00:10:00Z', 'Europe/Berlin', skipped)).toBe('2026-03-29T01:00:00.000Z');
  });

  it('fall back (Berlin, 25 October 2026, 03:00 → 02:00): 25-hour night, repeated hour taken once', () => {
    // 22:00 CEST (+2) = 20:00Z on the 24th; 08:00 CET (+1) on the 25th = 07:00Z.
    expect(opening('2026-10-24T20:00:00Z', 'Europe/Berlin')).toBe('2026-10-25T07:00:00.000Z');
    // A window opening in the repeated hour opens at its first occurrence (02:30 CEST = 00:30Z).
    const repeated = parseSendWindow('02:30-21:00');
    expect(opening('2026-10-24T22:00:00Z', 'Europe/Berlin', repeated)).toBe('2026-10-25T00:30:00.000Z');
  });

  it('a 30-minute offset with DST (Adelaide: +9:30, +10:30 from 4 October 2026)', () => {
    // 03:00 ACST (+9:30) on 3 October = 17:30Z on the 2nd → 08:00 ACST = 22:30Z.
    expect(opening('2026-10-02T17:30:00Z', 'Australia/Adelaide')).toBe('2026-10-02T22:30:00.000Z');
    // 03:00 ACDT (+10:30) on 4 October = 16:30Z on the 3rd → 08:00 ACDT = 21:30Z.
    expect(opening('2026-10-03T16:30:00Z', 'Australia/Adelaide')).toBe('2026-10-03T21:30:00.000Z');
    // Across the change: 22:00 ACST on the 3rd (12:30Z) → 08:00 ACDT on the 4th (21:30Z): 9 h, not 10.
    expect(opening('2026-10-03T12:30:00Z', 'Australia/Adelaide')).toBe('2026-10-03T21:30:00.000Z');
    // DST ends 5 April 2026 (03:00 ACDT → 02:00 ACST): 22:00 ACDT on the 4th (11:30Z) → 08:00 ACST (22:30Z).
    expect(opening('2026-04-04T11:30:00Z', 'Australia/Adelaide')).toBe('2026-04-04T22:30:00.000Z');
  });

  it('a 30-minute offset without DST (Kolkata, +5:30)', () => {
    // 03:00 IST = 21:30Z the day before → 08:00 IST = 02:30Z.
    expect(opening('2026-01-14T21:30:00Z', 'Asia/Kolkata')).toBe('2026-01-15T02:30:00.000Z');
  });

  it('a window crossing midnight (21:00-08:00) is open at night and opens at 21:00', () => {
    const night = parseSendWindow('21:00-08:00');
    expect(opening('2026-06-10T23:00:00Z', 'UTC', night)).toBeUndefined();
    expect(opening('2026-06-10T03:00:00Z', 'UTC', night)).toBeUndefined();
    expect(opening('2026-06-10T12:00:00Z', 'UTC', night)).toBe('2026-06-10T21:00:00.000Z');
  });

  it('zonedInstant maps a local wall time to its instant', () => {
    expect(new Date(zonedInstant(Date.UTC(2026, 0, 15, 8, 0), 'Asia/Kolkata')).toISOString()).toBe(
      '2026-01-15T02:30:00.000Z',
    );
  });
});

describe('decideSendWindow', () => {
  const now = at('2026-06-10T01:00:00Z'); // 03:00 in Berlin
  it('holds standard and bulk notices until the opening, naming the window', () => {
    for (const priority of ['standard', 'bulk', undefined] as const) {
      const decision = decideSendWindow({ now, window: day, zone: 'Europe/Berlin', priority });
      expect(decision).toEqual({
        kind: 'held',
        until: at('2026-06-10T06:00:00Z'),
        detail: 'until 2026-06-10T06:00:00.000Z (send window 08:00-21:00 Europe/Berlin)',
      });
    }
  });

  it('sends a critical notice at once, saying the window was not applied', () => {
    expect(decideSendWindow({ now, window: day, zone: 'Europe/Berlin', priority: 'critical' })).toEqual({
      kind: 'not_applied',
      detail: 'critical: sent outside the send window 08:00-21:00 Europe/Berlin',
    });
  });

  it('is open without a window or inside it', () => {
    expect(decideSendWindow({ now, zone: 'Europe/Berlin' })).toEqual({ kind: 'open' });
    expect(decideSendWindow({ now, window: day, zone: 'Asia/Tokyo' })).toEqual({ kind: 'open' }); // 10:00 JST
  });
});
