import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  fingerprintDestination,
  maskEmail,
  maskPhone,
  normalizeEmail,
  normalizePhone,
  resolveDestination,
} from '../../lambdas/domain/destination.ts';
import { InvalidDestinationError } from '../../lambdas/domain/errors.ts';
import { TEST_KEY } from '../helpers/factories.ts';

describe('normalisation', () => {
  it('lower-cases and trims email addresses', () => {
    expect(normalizeEmail('  Patient@Example.COM ')).toBe('patient@example.com');
  });

  it.each(['', 'no-at-sign', 'a@b', 'two@@example.com', 'sp ace@example.com'])('rejects email %j', (raw) => {
    expect(() => normalizeEmail(raw)).toThrow(InvalidDestinationError);
  });

  it('strips visual separators from phone numbers and requires E.164', () => {
    expect(normalizePhone('+1 (555) 123-4567')).toBe('+15551234567');
  });

  it.each(['5551234567', '+05551234567', '+1234567890123456', '+1555abc4567', ''])(
    'rejects phone %j',
    (raw) => {
      expect(() => normalizePhone(raw)).toThrow(InvalidDestinationError);
    },
  );
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
    const b = resolveDestination(TEST_KEY, 'email', 'patient@example.com ');
    expect(a.fingerprint).toBe(b.fingerprint);
    expect(fingerprintDestination(TEST_KEY, 'sms', 'patient@example.com')).not.toBe(a.fingerprint);
    expect(fingerprintDestination(new Uint8Array(32), 'email', 'patient@example.com')).not.toBe(
      a.fingerprint,
    );
    expect(a.fingerprint).not.toContain('patient');
  });
});
