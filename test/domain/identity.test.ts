import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  containsContactData,
  contentDigest,
  deriveNoticeId,
  idempotencyKey,
  isNoticeId,
  variableDigests,
} from '../../lambdas/domain/identity.ts';
import { TEST_KEY } from '../helpers/factories.ts';

describe('deriveNoticeId', () => {
  it('is deterministic and well-formed', () => {
    const a = deriveNoticeId('lab-result-ready', 'evt_8f31', 'pat_1042');
    expect(a).toBe(deriveNoticeId('lab-result-ready', 'evt_8f31', 'pat_1042'));
    expect(isNoticeId(a)).toBe(true);
  });

  it('differs when any of the three inputs differs, including by moving characters between fields', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.string({ minLength: 1 }),
        fc.string({ minLength: 1 }),
        (t, e, r) => {
          fc.pre(!`${t}${e}${r}`.includes('\n'));
          const id = deriveNoticeId(t, e, r);
          expect(isNoticeId(id)).toBe(true);
          if (e.length > 1) expect(deriveNoticeId(t + e[0], e.slice(1), r)).not.toBe(id);
          expect(deriveNoticeId(t, e, `${r}x`)).not.toBe(id);
        },
      ),
    );
  });

  it('matches a pinned value so that business systems computing it themselves stay compatible', () => {
    // Computed independently (Python: base64.b32encode(sha256(b"lab-result-ready\nevt_8f31\npat_1042")),
    // lower-cased, first 26 characters) so the TypeScript encoder is checked against another one.
    expect(deriveNoticeId('lab-result-ready', 'evt_8f31', 'pat_1042')).toBe('ntc_hgvctydqtwabm3yfztbx6a356f');
  });
});

describe('idempotencyKey', () => {
  it('is stable per (notice, channel) and differs across channels', () => {
    expect(idempotencyKey('ntc_x', 'email')).toBe(idempotencyKey('ntc_x', 'email'));
    expect(idempotencyKey('ntc_x', 'email')).not.toBe(idempotencyKey('ntc_x', 'sms'));
  });
});

describe('contentDigest', () => {
  const base = { templateId: 'lab-result-ready', templateVersion: 'v3', destinationFingerprint: 'fp_a' };

  it('ignores key order in variables', () => {
    expect(contentDigest(TEST_KEY, { ...base, variables: { a: 1, b: { c: 2, d: 3 } } })).toBe(
      contentDigest(TEST_KEY, { ...base, variables: { b: { d: 3, c: 2 }, a: 1 } }),
    );
  });

  it('changes with version, variables or destination, and with the key', () => {
    const d = contentDigest(TEST_KEY, { ...base, variables: { firstName: 'Ada' } });
    expect(
      contentDigest(TEST_KEY, { ...base, templateVersion: 'v4', variables: { firstName: 'Ada' } }),
    ).not.toBe(d);
    expect(contentDigest(TEST_KEY, { ...base, variables: { firstName: 'Bob' } })).not.toBe(d);
    expect(
      contentDigest(TEST_KEY, { ...base, destinationFingerprint: 'fp_b', variables: { firstName: 'Ada' } }),
    ).not.toBe(d);
    expect(contentDigest(new Uint8Array(32), { ...base, variables: { firstName: 'Ada' } })).not.toBe(d);
  });

  it('canonical JSON sorts keys at every depth', () => {
    expect(canonicalJson({ b: [{ z: 1, a: 2 }], a: null })).toBe('{"a":null,"b":[{"a":2,"z":1}]}');
  });
});

describe('containsContactData', () => {
  it.each([
    'jane.doe@example.com',
    'pat_1:jane.doe@example.com',
    'mailto:x@y.org',
    '+15551234567',
    'evt+1 (555) 123-4567',
    'tel:+44 20 7946 0958',
  ])('finds contact data in %j', (value) => {
    expect(containsContactData(value)).toBe(true);
  });

  it.each([
    'pat_1042',
    'evt_8f31',
    '10428812345',
    'MRN-000123456789',
    'build@1.2',
    'a@b',
    '+1234567',
    'v2+beta',
  ])('lets %j pass', (value) => {
    expect(containsContactData(value)).toBe(false);
  });
});

describe('variableDigests', () => {
  it('is one short keyed digest per variable, equal for equal values in any key order', () => {
    const a = variableDigests(TEST_KEY, {
      firstName: 'Ada',
      portalUrl: 'https://p.example/r',
      n: { b: 1, a: 2 },
    });
    const b = variableDigests(TEST_KEY, {
      n: { a: 2, b: 1 },
      portalUrl: 'https://p.example/r',
      firstName: 'Ada',
    });
    expect(a).toEqual(b);
    expect(Object.keys(a).sort()).toEqual(['firstName', 'n', 'portalUrl']);
    for (const digest of Object.values(a)) expect(digest).toMatch(/^[A-Za-z0-9_-]{8}$/);
    expect(variableDigests(TEST_KEY, { firstName: 'Bob' }).firstName).not.toBe(a.firstName);
    expect(variableDigests(new Uint8Array(32), { firstName: 'Ada' }).firstName).not.toBe(a.firstName);
    // The same value under another name digests differently.
    expect(variableDigests(TEST_KEY, { lastName: 'Ada' }).lastName).not.toBe(a.firstName);
  });
});
