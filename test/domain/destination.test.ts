import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkEmail,
  checkPhone,
  EMAIL_PATTERN,
  fingerprintDestination,
  maskEmail,
  maskPhone,
  normalizeEmail,
  normalizePhone,
  PHONE_PATTERN,
  resolveDestination,
} from '../../lambdas/domain/destination.ts';
import { InvalidDestinationError } from '../../lambdas/domain/errors.ts';
import { TEST_KEY } from '../helpers/factories.ts';

describe('email addresses', () => {
  it('are accepted in any case and lower-cased, exactly as before these rules for valid input', () => {
    expect(normalizeEmail('Patient@Example.COM')).toBe('patient@example.com');
    expect(normalizeEmail("o'brien+labs.2026@mail.xn--bcher-kva.example")).toBe(
      "o'brien+labs.2026@mail.xn--bcher-kva.example",
    );
  });

  const LOCAL_64 = 'l'.repeat(64);
  it.each([
    ['', 'email_missing_at'],
    ['no-at-sign', 'email_missing_at'],
    ['a@b', 'email_invalid_domain'],
    ['two@@example.com', 'email_invalid_local_part'],
    ['sp ace@example.com', 'email_invalid_local_part'],
    [' patient@example.com', 'email_invalid_local_part'],
    ['patient@example.com ', 'email_invalid_domain'],
    ['pat\u0000ient@example.com', 'email_control_characters'],
    ['pat\u0007ient@example.com', 'email_control_characters'],
    ['\u001b[31mpatient@example.com', 'email_control_characters'],
    ['pat\u202eient@example.com', 'email_control_characters'],
    ['pat\u200bient@example.com', 'email_control_characters'],
    ['patient@example.com\n', 'email_control_characters'],
    ['a@x..com', 'email_invalid_domain'],
    ['a@exa_mple.com', 'email_invalid_domain'],
    ['a@-example.com', 'email_invalid_domain'],
    ['a@example-.com', 'email_invalid_domain'],
    ['a@example.123', 'email_invalid_domain'],
    ['a@localhost', 'email_invalid_domain'],
    [`a@${'d'.repeat(64)}.com`, 'email_invalid_domain'],
    ['a@[127.0.0.1]', 'email_address_literal'],
    ['a@[IPv6:::1]', 'email_address_literal'],
    ['"quoted"@x.com', 'email_quoted_local_part'],
    ['"a b"@example.com', 'email_quoted_local_part'],
    [`${LOCAL_64}x@example.com`, 'email_local_part_too_long'],
    ['.dot@example.com', 'email_invalid_local_part'],
    ['dot.@example.com', 'email_invalid_local_part'],
    ['do..t@example.com', 'email_invalid_local_part'],
    ['päivi@example.com', 'email_not_ascii'],
    ['a@bücher.example', 'email_not_ascii'],
    [`${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.com`, 'email_too_long'],
  ])('refuses %j with %s', (raw, code) => {
    expect(checkEmail(raw)).toMatchObject({ ok: false, code });
    expect(() => normalizeEmail(raw)).toThrow(InvalidDestinationError);
    const result = checkEmail(raw);
    if (!result.ok && raw.length > 3) expect(result.message).not.toContain(raw);
  });

  it('accepts a 64-octet local part and a 254-octet address', () => {
    expect(checkEmail(`${LOCAL_64}@example.com`).ok).toBe(true);
    const long = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`;
    expect(long.length).toBe(254);
    expect(checkEmail(long).ok).toBe(true);
  });

  const atext = fc.constantFrom(..."abcXYZ019!#$%&'*+/=?^_`{|}~-".split(''));
  const dotAtom = fc
    .array(
      fc.array(atext, { minLength: 1, maxLength: 8 }).map((chars) => chars.join('')),
      {
        minLength: 1,
        maxLength: 3,
      },
    )
    .map((parts) => parts.join('.'));
  const label = fc.stringMatching(/^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,10}[a-zA-Z0-9])?$/);
  const domain = fc
    .tuple(fc.array(label, { minLength: 1, maxLength: 3 }), fc.stringMatching(/^[a-zA-Z]{2,6}$/))
    .map(([labels, tld]) => [...labels, tld].join('.'));

  it('keeps the fingerprint of every address that was valid before: normalised = trimmed and lower-cased', () => {
    fc.assert(
      fc.property(dotAtom, domain, (local, host) => {
        const raw = `${local}@${host}`;
        expect(normalizeEmail(raw)).toBe(raw.trim().toLowerCase());
      }),
    );
  });

  it('never accepts an address with a control, format or non-ASCII character', () => {
    fc.assert(
      fc.property(
        dotAtom,
        domain,
        fc.nat(),
        fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
        (local, host, at, ch) => {
          fc.pre(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]|[^\p{ASCII}]/u.test(ch));
          const raw = `${local}@${host}`;
          const i = at % (raw.length + 1);
          expect(checkEmail(raw.slice(0, i) + ch + raw.slice(i)).ok).toBe(false);
        },
      ),
    );
  });
});

describe('phone numbers', () => {
  it('are accepted only as E.164: +, 8 to 15 digits, no leading 0', () => {
    expect(normalizePhone('+15551234567')).toBe('+15551234567');
    expect(checkPhone('+12345678').ok).toBe(true);
    expect(checkPhone('+123456789012345').ok).toBe(true);
  });

  it.each([
    ['+1 (555) 123-4567', 'phone_separators'],
    ['+1 555 123 4567', 'phone_separators'],
    [' +15551234567', 'phone_separators'],
    ['+1.555.123.4567', 'phone_separators'],
    ['+15551234567\n', 'phone_control_characters'],
    ['+1555\u202e1234567', 'phone_control_characters'],
    ['5551234567', 'phone_missing_plus'],
    ['0015551234567', 'phone_missing_plus'],
    ['+1555abc4567', 'phone_invalid_characters'],
    ['++15551234567', 'phone_invalid_characters'],
    ['+１５５５１２３４５６７', 'phone_invalid_characters'],
    ['+1234567', 'phone_too_short'],
    ['+', 'phone_too_short'],
    ['', 'phone_missing_plus'],
    ['+1234567890123456', 'phone_too_long'],
    ['+05551234567', 'phone_invalid_country_code'],
  ])('refuses %j with %s', (raw, code) => {
    expect(checkPhone(raw)).toMatchObject({ ok: false, code });
    expect(() => normalizePhone(raw)).toThrow(InvalidDestinationError);
  });

  it('accepts exactly the E.164 pattern, and normalises nothing', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), (raw) => {
        const result = checkPhone(raw);
        expect(result.ok).toBe(/^\+[1-9][0-9]{7,14}$/.test(raw));
        if (result.ok) expect(result.normalized).toBe(raw);
      }),
    );
  });
});

describe('masking', () => {
  it('masks as the design shows', () => {
    expect(maskEmail('patient@example.com')).toBe('p*****t@example.com');
    expect(maskPhone('+15551234567')).toBe('+1******4567');
  });

  it('never reveals a local part of three or more characters, nor a phone number', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9._]{3,30}$/), (local) => {
        const masked = maskEmail(`${local}@example.com`);
        expect(masked).not.toContain(`${local}@`);
        expect(masked.length).toBe(`${local}@example.com`.length);
      }),
    );
    fc.assert(
      fc.property(fc.stringMatching(/^\+[1-9]\d{7,14}$/), (phone) => {
        expect(maskPhone(phone)).not.toBe(phone);
        expect(maskPhone(phone)).toContain('*');
      }),
    );
  });
});

describe('fingerprints', () => {
  it('are equal for equal normalised destinations and differ by channel and key', () => {
    const a = resolveDestination(TEST_KEY, 'email', 'Patient@Example.com');
    const b = resolveDestination(TEST_KEY, 'email', 'patient@example.COM');
    expect(a.fingerprint).toBe(b.fingerprint);
    expect(fingerprintDestination(TEST_KEY, 'sms', 'patient@example.com')).not.toBe(a.fingerprint);
    expect(fingerprintDestination(new Uint8Array(32), 'email', 'patient@example.com')).not.toBe(
      a.fingerprint,
    );
    expect(a.fingerprint).not.toContain('patient');
  });
});

describe('EMAIL_PATTERN and PHONE_PATTERN (the rules as the OpenAPI document states them)', () => {
  // With the `u` flag, as JSON Schema validators compile `pattern`.
  const email = new RegExp(EMAIL_PATTERN, 'u');
  const phone = new RegExp(PHONE_PATTERN, 'u');

  it('accept exactly what checkEmail accepts', () => {
    const pieces = fc.constantFrom(
      'a',
      'Z',
      '9',
      '-',
      '.',
      '@',
      "o'b+x",
      '[1.2.3.4]',
      '"q"',
      'é',
      ' ',
      '\u0000',
      '\u202e',
      'example.com',
      'x'.repeat(63),
      'y'.repeat(64),
      '123',
    );
    /** A valid address with a piece spliced in somewhere: the near misses a pattern gets wrong. */
    const spliced = fc.tuple(fc.emailAddress(), pieces, fc.nat()).map(([valid, piece, at]) => {
      const i = at % (valid.length + 1);
      return valid.slice(0, i) + piece + valid.slice(i);
    });
    const address = fc.oneof(
      fc.emailAddress(),
      spliced,
      fc.array(pieces, { maxLength: 8 }).map((parts) => parts.join('')),
      fc
        .tuple(
          fc.array(pieces, { minLength: 1, maxLength: 4 }),
          fc.array(pieces, { minLength: 1, maxLength: 6 }),
        )
        .map(([local, domain]) => `${local.join('')}@${domain.join('')}`),
    );
    fc.assert(
      fc.property(address, (value) => {
        expect(email.test(value), JSON.stringify(value)).toBe(checkEmail(value).ok);
      }),
      { numRuns: 5000 },
    );
    for (const value of [
      'a@b.co',
      'a@b.123',
      `${'l'.repeat(64)}@x.io`,
      `${'l'.repeat(65)}@x.io`,
      `a@${'d'.repeat(63)}.${'e'.repeat(63)}.${'f'.repeat(63)}.${'g'.repeat(61)}`,
    ]) {
      expect(email.test(value), value).toBe(checkEmail(value).ok);
    }
  });

  it('accept exactly what checkPhone accepts', () => {
    const piece = fc.constantFrom('+', '0', '1', '5', '9', ' ', '-', '(', ')', '.', 'a', '\n', '٣');
    const number = fc.oneof(
      fc.stringMatching(/^\+[0-9]{6,17}$/),
      fc
        .tuple(fc.stringMatching(/^\+[0-9]{6,17}$/), piece, fc.nat())
        .map(
          ([valid, p, at]) =>
            valid.slice(0, at % (valid.length + 1)) + p + valid.slice(at % (valid.length + 1)),
        ),
      fc.array(piece, { maxLength: 18 }).map((parts) => parts.join('')),
    );
    fc.assert(
      fc.property(number, (value) => {
        expect(phone.test(value), JSON.stringify(value)).toBe(checkPhone(value).ok);
      }),
      { numRuns: 5000 },
    );
    for (const digits of [7, 8, 15, 16]) {
      const value = `+1${'5'.repeat(digits - 1)}`;
      expect(phone.test(value), value).toBe(checkPhone(value).ok);
    }
  });
});
