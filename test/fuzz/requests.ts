/**
 * Generated HTTP requests for the fuzz layer, and the properties every answer must have.
 *
 * Requests are mostly near-valid notices with one or more fields made hostile (so they reach the
 * deep rules), plus batches, timelines, suppressions, Twilio callbacks and random routes; bodies
 * come as JSON, with invalid UTF-8 spliced in, truncated, with a BOM, nested too deep, or as
 * random bytes; headers vary the content type and carry values of their own.
 *
 * Every value a request submits that must never come back (destinations, variable values, free
 * text, header values, path and query values) carries a canary: `Zq` and ten hex digits (or, in
 * a phone number, ten random digits). A canary in any answer or log line is an echo.
 */
import fc from 'fast-check';
import { deriveNoticeId } from '../../lambdas/domain/identity.ts';

export interface FuzzRequest {
  readonly method: string;
  /** Raw request target: path, percent-encoding kept, optional `?query`. */
  readonly target: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Buffer | undefined;
  /**
   * In-process only: hand a text-typed body over base64-encoded instead of as a string (API
   * Gateway's other form; the handler must answer the same).
   */
  readonly forceBase64: boolean;
  /** What must never come back. */
  readonly canaries: readonly string[];
  /** Which route family this exercises (for the row and suppression properties). */
  readonly kind: 'notice' | 'batch' | 'timeline' | 'suppression' | 'twilio' | 'operator' | 'other';
}

/** Identifiers drawn from small pools, so that replays (200) and conflicts (409) happen. */
export const EVENT_IDS = Array.from({ length: 24 }, (_, i) => `evt_f${i + 1}`);
export const RECIPIENT_IDS = ['pat_f1', 'pat_f2', 'pat_f3'];

const canaryArb = fc.stringMatching(/^[0-9a-f]{10}$/).map((hex) => `Zq${hex}`);
const phoneDigitsArb = fc.stringMatching(/^[2-9][0-9]{9}$/);

/** Characters that have broken parsers, logs and terminals before. */
const HOSTILE_FRAGMENTS = [
  '',
  ' ',
  '\t',
  '\n',
  '\r\n',
  '\u0000',
  '\u0007',
  '\u001b[31m',
  '\u007f',
  '\u0085',
  '\u00a0',
  '\u200b',
  '\u202e',
  '\u2066',
  '\u2028',
  '\ufeff',
  '\ufffd',
  '\ud800',
  '\udfff',
  '😀',
  '"',
  "'",
  '\\',
  '<script>',
  '%00',
  '%ZZ',
  '../',
  '@',
  '+',
  '..',
  '[127.0.0.1]',
  '_',
  '-',
  'Ä',
  'ß',
  'İ',
];
const fragmentArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_FRAGMENTS) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 4 }) },
);

/** `pre + canary + post`, the canary recorded. */
function canaried(canaries: string[]) {
  return fc.tuple(fragmentArb, canaryArb, fragmentArb).map(([pre, canary, post]) => {
    canaries.push(canary);
    return `${pre}${canary}${post}`;
  });
}

/** Percent-encodes the UTF-8 bytes of `value` (a lone surrogate becomes U+FFFD's bytes; never throws). */
export function percentEncode(value: string): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

interface Built<T> {
  readonly value: T;
  readonly canaries: readonly string[];
}

/** Builds a value with the canaries it used (an arbitrary per call, so canaries stay per request). */
function withCanaries<T>(build: (canaries: string[]) => fc.Arbitrary<T>): fc.Arbitrary<Built<T>> {
  return fc.constant(null).chain(() => {
    const canaries: string[] = [];
    return build(canaries).map((value) => ({ value, canaries: [...canaries] }));
  });
}

// --- destinations --------------------------------------------------------------------------------

function emailArb(canaries: string[]): fc.Arbitrary<unknown> {
  const local = canaryArb.map((c) => {
    canaries.push(c);
    return c;
  });
  const domain = fc.constantFrom('example.com', 'EXAMPLE.org', 'mail.example.co.uk', 'xn--bcher-kva.example');
  const hostileDomain = fc.constantFrom(
    'x..com',
    'exa_mple.com',
    '[127.0.0.1]',
    'localhost',
    '-x.com',
    'x.123',
    '',
  );
  return fc.oneof(
    { weight: 14, arbitrary: fc.tuple(local, domain).map(([l, d]) => `${l}@${d}`) },
    { weight: 1, arbitrary: fc.tuple(local, domain).map(([l, d]) => `${l}.${l}@${d}`) },
    {
      weight: 3,
      arbitrary: fc.tuple(local, domain, fragmentArb, fc.nat(40)).map(([l, d, f, at]) => {
        const raw = `${l}@${d}`;
        const i = at % (raw.length + 1);
        return raw.slice(0, i) + f + raw.slice(i);
      }),
    },
    { weight: 1, arbitrary: fc.tuple(local, hostileDomain).map(([l, d]) => `${l}@${d}`) },
    { weight: 1, arbitrary: local.map((l) => `"${l}"@example.com`) },
    { weight: 1, arbitrary: local.map((l) => `${l}${'x'.repeat(60)}@example.com`) },
    { weight: 1, arbitrary: local.map((l) => l) },
    { weight: 1, arbitrary: fc.constantFrom(null, 42, true, [], {}) },
  );
}

function phoneArb(canaries: string[]): fc.Arbitrary<unknown> {
  const digits = phoneDigitsArb.map((d) => {
    canaries.push(d);
    return d;
  });
  return fc.oneof(
    { weight: 14, arbitrary: digits.map((d) => `+1${d}`) },
    {
      weight: 3,
      arbitrary: fc.tuple(digits, fragmentArb, fc.nat(12)).map(([d, f, at]) => {
        const raw = `+1${d}`;
        const i = at % (raw.length + 1);
        return raw.slice(0, i) + f + raw.slice(i);
      }),
    },
    {
      weight: 2,
      arbitrary: digits
        .map((d) => [
          `+1 (${d.slice(0, 3)}) ${d.slice(3, 6)}-${d.slice(6)}`,
          ` +1${d}`,
          `+1${d}\n`,
          `1${d}`,
          `+01${d}`,
          `+1${d}${d}`,
        ])
        .chain((forms) => fc.constantFrom(...forms)),
    },
    { weight: 1, arbitrary: fc.constantFrom(null, 15551234567, '+', '') },
  );
}

// --- a notice body ---------------------------------------------------------------------------

const hostileIdArb = fc.oneof(
  fc.constantFrom(
    '',
    '   ',
    '\t',
    ' evt_f1',
    'evt_f1 ',
    'evt\u0000x',
    'evt\u202ex',
    'e\u200bvt',
    'x'.repeat(129),
  ),
  fc.constantFrom('jane.doe@example.com', '+15551234567', 'pat +44 20 7946 0958', 'mailto:a@b.example'),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom(42, null, true, [], {}),
);

function idArb(pool: readonly string[]) {
  return fc.oneof(
    { weight: 14, arbitrary: fc.constantFrom(...pool) },
    { weight: 1, arbitrary: hostileIdArb },
  );
}

const channelsArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(['email', 'sms'], ['sms'], ['email'], ['sms', 'email']) },
  { weight: 1, arbitrary: fc.constantFrom([], ['fax'], ['sms', 'sms'], 'email', [1], null, ['EMAIL']) },
);

const templateArb = fc.oneof(
  { weight: 8, arbitrary: fc.constant({ id: 'lab-result-ready', version: 'v3' }) },
  { weight: 1, arbitrary: fc.constant({ id: 'appointment-reminder', version: 'v1' }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      { id: 'lab-result-ready', version: 'v99' },
      { id: 'no-such-template', version: 'v1' },
      { id: 'lab-result-ready' },
      { id: ' lab-result-ready', version: 'v3' },
      { id: 'lab-result-ready', version: 3 },
      'lab-result-ready',
      null,
    ),
  },
);

function variablesArb(canaries: string[]): fc.Arbitrary<unknown> {
  const text = canaried(canaries);
  return fc.oneof(
    { weight: 14, arbitrary: text.map((firstName) => ({ firstName })) },
    {
      weight: 2,
      arbitrary: fc.tuple(text, canaried(canaries)).map(([firstName, path]) => ({
        firstName,
        portalUrl: `https://portal.example.org/${percentEncode(path)}`,
      })),
    },
    {
      weight: 1,
      arbitrary: canaried(canaries).map((v) => ({ firstName: 'Ada', portalUrl: `http://x/${v}` })),
    },
    { weight: 1, arbitrary: canaried(canaries).map((v) => ({ firstName: 'Ada', diagnosis: v })) },
    { weight: 1, arbitrary: canaried(canaries).map((v) => ({ [`my var ${v}`]: v, firstName: 'Ada' })) },
    { weight: 1, arbitrary: canaried(canaries).map((v) => ({ firstName: [v], nested: { deep: v } })) },
    {
      weight: 1,
      arbitrary: canaried(canaries).map((v) =>
        Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`v${i}`, v])),
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom(null, 'firstName', 42, [], { firstName: 31337 }, {}) },
  );
}

function deadlineArb(now: number): fc.Arbitrary<unknown> {
  return fc.oneof(
    {
      weight: 5,
      arbitrary: fc
        .integer({ min: 60_000, max: 29 * 86_400_000 })
        .map((ms) => new Date(now + ms).toISOString()),
    },
    { weight: 2, arbitrary: fc.constant(undefined) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        new Date(now - 60_000).toISOString(),
        new Date(now + 40 * 86_400_000).toISOString(),
        '2027-02-30T09:00:00Z',
        '2026-12-01T09:00:00',
        'next tuesday',
        1796115600000,
        null,
        '',
      ),
    },
  );
}

function noticeArb(now: number): fc.Arbitrary<Built<Record<string, unknown>>> {
  return withCanaries((canaries) =>
    fc
      .record({
        eventId: idArb(EVENT_IDS),
        eventType: idArb(['lab-result-ready']),
        recipient: fc.record(
          {
            id: idArb(RECIPIENT_IDS),
            email: emailArb(canaries),
            phone: phoneArb(canaries),
            extra: canaried(canaries),
          },
          { requiredKeys: ['id'] },
        ),
        channels: channelsArb,
        template: templateArb,
        variables: variablesArb(canaries),
        deadline: deadlineArb(now),
        unknown: fc.oneof(
          canaried(canaries).map((v) => ({ [`x@${v}`]: v })),
          canaried(canaries).map((v) => ({ deadlne: v })),
        ),
      })
      .chain((body) =>
        // Most bodies keep most fields; some lose one, and a few gain an unknown one.
        fc
          .record({
            drop: fc.oneof(
              { weight: 4, arbitrary: fc.constant(undefined) },
              {
                weight: 1,
                arbitrary: fc.constantFrom(
                  'eventId',
                  'eventType',
                  'recipient',
                  'channels',
                  'template',
                  'variables',
                ),
              },
            ),
            extra: fc.nat(4).map((n) => n === 0),
            keepExtraRecipientField: fc.nat(9).map((n) => n === 0),
          })
          .map(({ drop, extra, keepExtraRecipientField }) => {
            const { unknown, ...rest } = body;
            const recipient = { ...(rest.recipient as Record<string, unknown>) };
            if (!keepExtraRecipientField) delete recipient.extra;
            const out: Record<string, unknown> = { ...rest, recipient, ...(extra ? unknown : {}) };
            if (drop) delete out[drop];
            if (out.deadline === undefined) delete out.deadline;
            return out;
          }),
      ),
  );
}

// --- bodies ------------------------------------------------------------------------------------

const INVALID_UTF8 = [
  [0xff],
  [0xc0, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xe2, 0x82],
  [0x80],
];

function encodedBody(value: unknown): fc.Arbitrary<Buffer> {
  const text = JSON.stringify(value) ?? 'null';
  const bytes = Buffer.from(text, 'utf8');
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant(bytes) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom(...INVALID_UTF8), fc.nat(bytes.length))
        .map(([bad, at]) => Buffer.concat([bytes.subarray(0, at), Buffer.from(bad), bytes.subarray(at)])),
    },
    { weight: 1, arbitrary: fc.nat(bytes.length).map((at) => bytes.subarray(0, at)) },
    { weight: 1, arbitrary: fc.constant(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes])) },
    { weight: 1, arbitrary: fc.constant(Buffer.from(`${'['.repeat(40)}${text}${']'.repeat(40)}`)) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)) },
    { weight: 1, arbitrary: fc.constant(Buffer.from(text.replace(/"/g, "'"))) },
  );
}

const contentTypeArb = fc.oneof(
  { weight: 12, arbitrary: fc.constant('application/json') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'APPLICATION/JSON; charset="UTF-8"',
      'application/json; charset=iso-8859-1',
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/octet-stream',
      'application/problem+json',
      'multipart/form-data; boundary=x',
      'text/json',
    ),
  },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

/** Extra header values are submitted values too: none may come back. */
function headersArb(canaries: string[]) {
  return fc
    .record({
      contentType: contentTypeArb,
      extra: fc.oneof(
        fc.constant({}),
        canaried(canaries)
          .filter((v) => /^[\t\x20-\x7e]*$/.test(v) && v.trim() === v)
          .map((v) => ({ 'x-request-note': v, 'user-agent': `fuzz ${v}`, cookie: `session=${v}` })),
      ),
    })
    .map(({ contentType, extra }) => ({ ...(contentType ? { 'content-type': contentType } : {}), ...extra }));
}

// --- requests ----------------------------------------------------------------------------------

function noticeRequestArb(now: number): fc.Arbitrary<FuzzRequest> {
  return noticeArb(now).chain(({ value, canaries }) => {
    const extra: string[] = [];
    return fc
      .record({ body: encodedBody(value), headers: headersArb(extra), forceBase64: fc.boolean() })
      .map(({ body, headers, forceBase64 }) => ({
        method: 'POST',
        target: '/v1/notices',
        headers,
        body,
        forceBase64,
        canaries: [...canaries, ...extra],
        kind: 'notice' as const,
      }));
  });
}

function batchRequestArb(now: number): fc.Arbitrary<FuzzRequest> {
  return fc.array(noticeArb(now), { minLength: 1, maxLength: 4 }).chain((items) =>
    fc
      .record({
        shape: fc.constantFrom('notices', 'notices', 'notices', 'object', 'many', 'bare'),
        forceBase64: fc.boolean(),
      })
      .chain(({ shape, forceBase64 }) => {
        const notices = items.map((i) => i.value);
        const value =
          shape === 'notices'
            ? { notices }
            : shape === 'object'
              ? { notices: notices[0] }
              : shape === 'many'
                ? { notices: Array.from({ length: 101 }, () => notices[0]) }
                : notices;
        return encodedBody(value).map((body) => ({
          method: 'POST',
          target: '/v1/notices/batch',
          headers: { 'content-type': 'application/json' },
          body,
          forceBase64,
          canaries: items.flatMap((i) => i.canaries),
          kind: 'batch' as const,
        }));
      }),
  );
}

function timelineRequestArb(): fc.Arbitrary<FuzzRequest> {
  const known = fc
    .tuple(fc.constantFrom(...EVENT_IDS), fc.constantFrom(...RECIPIENT_IDS))
    .map(([e, r]) => deriveNoticeId('lab-result-ready', e, r));
  return withCanaries((canaries) =>
    fc.oneof(
      known,
      canaryArb.map((c) => {
        canaries.push(c);
        return `ntc_${c}`;
      }),
      canaried(canaries).map((v) => percentEncode(v)),
    ),
  ).map(({ value, canaries }) => ({
    method: 'GET',
    target: `/v1/notices/${value}`,
    headers: {},
    forceBase64: false,
    canaries,
    kind: 'timeline' as const,
  }));
}

function suppressionRequestArb(): fc.Arbitrary<FuzzRequest> {
  return withCanaries((canaries) =>
    fc.record({
      method: fc.constantFrom('GET', 'PUT', 'PUT', 'DELETE', 'POST'),
      channel: fc.constantFrom('sms', 'email', 'email', 'fax', 'SMS'),
      destination: fc.oneof(emailArb(canaries), phoneArb(canaries)),
      rawPlus: fc.boolean(),
      body: fc.oneof(
        fc.constant(undefined),
        fc.constantFrom({ reason: 'patient_request' }, { reason: 'Not A Code' }, { actor: 'ops-1' }, {}),
        canaried(canaries).map((v) => ({ detail: v })),
        // Always an invalid actor ('@' is refused): a valid one is the operator's name, recorded and
        // shown in the history by design, so its echo is no leak (seed 616769464 drew `canary-`).
        canaried(canaries).map((v) => ({ reason: 'operator', actor: `${v}@` })),
        canaried(canaries).map((v) => ({ phone: v })),
      ),
    }),
  ).map(({ value, canaries }) => {
    const encoded = percentEncode(String(value.destination));
    return {
      method: value.method,
      target: `/v1/suppressions/${value.channel}/${value.rawPlus ? encoded.replace('%2B', '+') : encoded}`,
      headers:
        value.body === undefined ? ({} as Record<string, string>) : { 'content-type': 'application/json' },
      body: value.body === undefined ? undefined : Buffer.from(JSON.stringify(value.body)),
      forceBase64: false,
      canaries,
      kind: 'suppression' as const,
    };
  });
}

function twilioRequestArb(): fc.Arbitrary<FuzzRequest> {
  return withCanaries((canaries) =>
    fc.record({
      to: phoneArb(canaries),
      body: canaried(canaries),
      ref: fc.oneof(
        fc.constantFrom(...EVENT_IDS).map((e) => `${deriveNoticeId('lab-result-ready', e, 'pat_f1')}-sms`),
        canaryArb.map((c) => {
          canaries.push(c);
          return c;
        }),
      ),
      signature: fc.oneof(fc.constant(undefined), fc.constant('AAAAAAAAAAAAAAAAAAAAAAAAAAA='), canaryArb),
      status: fc.constantFrom('delivered', 'undelivered', 'failed', 'sent', 'bogus'),
    }),
  ).map(({ value, canaries }) => ({
    method: 'POST',
    target: `/v1/provider-events/twilio?ref=${percentEncode(value.ref)}`,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(value.signature ? { 'x-twilio-signature': value.signature } : {}),
    },
    body: Buffer.from(
      new URLSearchParams({
        MessageSid: 'SM0123456789abcdef0123456789abcdef',
        MessageStatus: value.status,
        To: String(value.to),
        Body: value.body,
        ErrorCode: '30005',
      }).toString(),
    ),
    forceBase64: false,
    canaries,
    kind: 'twilio' as const,
  }));
}

function otherRequestArb(now: number): fc.Arbitrary<FuzzRequest> {
  return withCanaries((canaries) =>
    fc.record({
      method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'FOO'),
      path: fc.oneof(
        fc.constantFrom(
          '/',
          '/v1',
          '/v1/',
          '/v1/health',
          '/v1/health/',
          '/v1/notices',
          '/v1//notices',
          '/v1/notices/',
          '/v1/notices/batch/x',
          '/v1/suppressions/sms',
          '/v1/suppressions/sms/%2B1/extra',
          '/v1/provider-events/other',
          '/prod/v1/notices',
          '/v1/notices/%00',
          '/v1/notices/%ZZ',
          '/v1/notices/..%2F..%2Fetc',
          '/V1/NOTICES',
          '/v1/suppressions/email/a%FFb%40example.com',
          '/v1/suppressions/sms/%2B1555%C0%AF1234567',
          '/v1/notices/ntc_%ED%A0%80',
        ),
        canaried(canaries).map((v) => `/v1/${percentEncode(v)}`),
      ),
      query: fc.oneof(
        fc.constant(''),
        canaried(canaries).map((v) => `?q=${percentEncode(v)}&q=2`),
      ),
      body: fc.oneof(
        fc.constant(undefined),
        noticeArb(now).map((n) => {
          canaries.push(...n.canaries);
          return Buffer.from(JSON.stringify(n.value));
        }),
      ),
    }),
  ).map(({ value, canaries }) => ({
    method: value.method,
    target: `${value.path}${value.query}`,
    headers: value.body ? { 'content-type': 'application/json' } : ({} as Record<string, string>),
    body: value.body,
    forceBase64: false,
    canaries,
    // POST /v1/notices is the intake route whatever the query string (API Gateway routes on the
    // path alone): a valid notice there is recorded, and is checked as a notice.
    kind: value.method === 'POST' && value.path === '/v1/notices' ? ('notice' as const) : ('other' as const),
  }));
}

/**
 * The operator routes: the list with good and hostile query values, cancels and resolutions of
 * pooled notices (which exist once the notice requests have recorded them) with good and hostile
 * bodies. A resolution's or cancel's `reason` is the person's own words, shown in the timeline by
 * design, so a valid one carries no canary; a hostile body is never a valid one.
 */
function operatorRequestArb(now: number): fc.Arbitrary<FuzzRequest> {
  const known = fc
    .tuple(fc.constantFrom(...EVENT_IDS), fc.constantFrom(...RECIPIENT_IDS))
    .map(([e, r]) => deriveNoticeId('lab-result-ready', e, r));
  return withCanaries((canaries) => {
    const hostile = fc.oneof(
      canaried(canaries),
      canaryArb.map((c) => {
        canaries.push(c);
        return c;
      }),
    );
    const listTarget = (query: Record<string, unknown>) =>
      `/v1/notices${
        Object.keys(query).length
          ? `?${Object.entries(query)
              .map(([k, v]) => `${k === 'other' ? 'sort' : k}=${percentEncode(String(v))}`)
              .join('&')}`
          : ''
      }`;
    // Lists the API takes (each filter optional), so that pages of the open index come back.
    const goodList = fc
      .record(
        {
          state: fc.constantFrom('reserved', 'sending', 'retry_scheduled', 'unknown'),
          channel: fc.constantFrom('email', 'sms'),
          olderThan: fc.constantFrom('PT0S', 'PT10M', 'P1D'),
          limit: fc.constantFrom('1', '50', '200'),
        },
        { requiredKeys: [] },
      )
      .map((query) => ({ method: 'GET', target: listTarget(query), body: undefined as Buffer | undefined }));
    const queryValue = (good: readonly string[]) => fc.oneof(fc.constantFrom(...good), hostile);
    const hostileList = fc
      .record(
        {
          state: queryValue([
            'reserved',
            'sending',
            'retry_scheduled',
            'unknown',
            'accepted',
            'unknown,reserved',
          ]),
          channel: queryValue(['email', 'sms', 'fax']),
          olderThan: queryValue(['PT10M', 'P1D', 'PT0S', 'P1M', '10m', 'PT']),
          limit: queryValue(['1', '50', '200', '0', '201', '01', '-1']),
          cursor: queryValue(['eyJ2IjoxfQ', 'bm90LWEtY3Vyc29y', '']),
          other: hostile,
        },
        { requiredKeys: [] },
      )
      .map((query) => ({ method: 'GET', target: listTarget(query), body: undefined as Buffer | undefined }));
    const post = (target: string, body: unknown) => ({
      method: 'POST',
      target,
      body: Buffer.from(JSON.stringify(body)) as Buffer | undefined,
    });
    // Moves the API takes on pooled notices: cancels, and resolutions (409 unless the channel is unknown).
    const goodCancel = fc
      .tuple(
        known,
        fc.constantFrom<unknown>(
          { reason: 'appointment cancelled' },
          { reason: 'appointment cancelled', actor: 'ops-1' },
        ),
      )
      .map(([id, body]) => post(`/v1/notices/${id}/cancel`, body));
    const goodResolution = fc
      .tuple(
        known,
        fc.constantFrom('email', 'sms'),
        fc.constantFrom<unknown>(
          { outcome: 'accepted', reason: 'seen in provider console' },
          { outcome: 'not_sent', reason: 'not in the provider console', evidence: 'ticket OPS-1' },
        ),
      )
      .map(([id, channel, body]) => post(`/v1/notices/${id}/channels/${channel}/resolution`, body));
    const noticeId = fc.oneof(
      known,
      known,
      hostile.map((v) => percentEncode(v)),
    );
    const body = fc.oneof(
      fc.constantFrom<unknown>(
        { outcome: 'accepted', reason: 'seen in provider console' },
        { outcome: 'not_sent', reason: 'not in the provider console', evidence: 'ticket OPS-1' },
        { reason: 'appointment cancelled' },
        { reason: 'appointment cancelled', actor: 'ops-1' },
        {},
        [],
        null,
      ),
      hostile.map((v) => ({ outcome: v, reason: '' })),
      hostile.map((v) => ({ reason: 'x', actor: `${v}@` })),
      hostile.map((v) => ({ reason: 'x'.repeat(501), evidence: v, extra: v })),
      noticeArb(now).map((n) => {
        canaries.push(...n.canaries);
        return n.value;
      }),
    );
    const hostileAct = fc
      .record({
        id: noticeId,
        route: fc.constantFrom(
          'cancel',
          'channels/sms/resolution',
          'channels/email/resolution',
          'channels/fax/resolution',
        ),
        method: fc.constantFrom('POST', 'POST', 'POST', 'GET', 'PUT'),
        body,
      })
      .map(({ id, route, method, body }) => ({
        method,
        target: `/v1/notices/${id}/${route}`,
        body: Buffer.from(JSON.stringify(body)) as Buffer | undefined,
      }));
    return fc.oneof(
      { weight: 3, arbitrary: goodList },
      { weight: 4, arbitrary: hostileList },
      { weight: 3, arbitrary: goodCancel },
      { weight: 3, arbitrary: goodResolution },
      { weight: 6, arbitrary: hostileAct },
      {
        weight: 1,
        arbitrary: fc.constant({
          method: 'GET',
          target: '/v1/openapi.json',
          body: undefined as Buffer | undefined,
        }),
      },
    );
  }).map(({ value, canaries }) => ({
    method: value.method,
    target: value.target,
    headers: value.body ? { 'content-type': 'application/json' } : ({} as Record<string, string>),
    body: value.body,
    forceBase64: false,
    canaries,
    kind: 'operator' as const,
  }));
}

export function requestArb(now: number): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(
    { weight: 55, arbitrary: noticeRequestArb(now) },
    { weight: 10, arbitrary: batchRequestArb(now) },
    { weight: 8, arbitrary: timelineRequestArb() },
    { weight: 12, arbitrary: suppressionRequestArb() },
    { weight: 5, arbitrary: twilioRequestArb() },
    { weight: 8, arbitrary: operatorRequestArb(now) },
    { weight: 10, arbitrary: otherRequestArb(now) },
  );
}

// --- properties ----------------------------------------------------------------------------------

export interface FuzzAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body: string;
}

/** The first canary found in `text` (compared case-insensitively: addresses are lower-cased). */
export function echoedCanary(canaries: readonly string[], text: string): string | undefined {
  const lower = text.toLowerCase();
  return canaries.find((canary) => lower.includes(canary.toLowerCase()));
}

/** The API's problem types; `about:blank` only from the local gateway itself (unparseable HTTP, 408, 413). */
const PROBLEM_TYPE = /^(https:\/\/notice-ledger\.dev\/problems\/[a-z-]+|about:blank)$/;
const CODE = /^[a-z][a-z0-9_]*$/;

/** A problem+json body (RFC 9457): its own status; field errors with paths where the status has them. */
function problemViolation(problem: unknown, status: number): string | undefined {
  if (typeof problem !== 'object' || problem === null) return 'problem is not an object';
  const p = problem as Record<string, unknown>;
  if (typeof p.type !== 'string' || !PROBLEM_TYPE.test(p.type)) return `problem type ${String(p.type)}`;
  if (typeof p.title !== 'string' || p.title.length === 0) return 'problem without title';
  if (p.status !== status) return `problem status ${String(p.status)} for ${status}`;
  if (status === 400 || status === 409 || status === 422) {
    if (!Array.isArray(p.errors) || p.errors.length === 0) return `${status} without errors`;
    for (const e of p.errors as Record<string, unknown>[]) {
      if (
        typeof e.path !== 'string' ||
        typeof e.message !== 'string' ||
        typeof e.code !== 'string' ||
        !CODE.test(e.code)
      ) {
        return `malformed field error ${JSON.stringify(e)}`;
      }
    }
  }
  return undefined;
}

/**
 * What is wrong with an answer, or undefined: no 5xx; every error problem+json with field paths;
 * batch results the same per item; no canary anywhere in it.
 */
export function answerViolation(request: FuzzRequest, answer: FuzzAnswer): string | undefined {
  if (answer.status >= 500) return `status ${answer.status}`;
  const echo =
    echoedCanary(request.canaries, answer.body) ??
    echoedCanary(request.canaries, Object.values(answer.headers).join('\n'));
  if (echo) return `echoed ${echo}`;
  if (request.method === 'HEAD') return undefined;
  if (answer.status >= 400) {
    if (!answer.headers['content-type']?.startsWith('application/problem+json')) {
      return `content-type ${answer.headers['content-type']} for ${answer.status}`;
    }
    let problem: unknown;
    try {
      problem = JSON.parse(answer.body);
    } catch {
      return 'problem body is not JSON';
    }
    return problemViolation(problem, answer.status);
  }
  if (request.kind === 'batch' && answer.status === 200) {
    const results = (JSON.parse(answer.body) as { results: { status: number; error?: unknown }[] }).results;
    for (const result of results) {
      if (result.status >= 500) return `batch item status ${result.status}`;
      if (result.status >= 400) {
        const violation = problemViolation(result.error, result.status);
        if (violation) return `batch item: ${violation}`;
      }
    }
  }
  return undefined;
}

/** The statuses of a batch answer's items (empty for anything else). */
export function batchStatuses(answer: FuzzAnswer): number[] {
  try {
    const parsed = JSON.parse(answer.body) as { results?: { status: number }[] };
    return (parsed.results ?? []).map((r) => r.status);
  } catch {
    return [];
  }
}

/** Printable for a failure report: bodies as text where they are text, else base64. */
export function describeRequest(request: FuzzRequest): string {
  const body = request.body
    ? /^[\x20-\x7e\s]*$/.test(request.body.toString('latin1'))
      ? request.body.toString('utf8').slice(0, 400)
      : `base64:${request.body.toString('base64').slice(0, 400)}`
    : '';
  return `${request.method} ${request.target} ${JSON.stringify(request.headers)} ${body}`;
}
