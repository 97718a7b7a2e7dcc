/**
 * The requests issue 10 found accepted (or answered badly), each with the status and codes it
 * must get now. Used in-process (test/handlers/intake-refusals.test.ts) and through the running
 * stack (test/fuzz/stack-fuzz.test.ts), where the ledger table is checked for rows afterwards.
 */

export interface HostileExample {
  readonly name: string;
  readonly method: 'POST' | 'PUT';
  /** Relative to the API's origin. */
  readonly path: string;
  readonly contentType: string;
  /** The bytes on the wire. */
  readonly body: Buffer;
  readonly status: number;
  readonly type: string;
  /** `[path, code]` that must be among `errors`. */
  readonly errors: readonly (readonly [string, string])[];
  /** Submitted values that must not come back in the answer or any log. */
  readonly secrets: readonly string[];
}

const PROBLEM = 'https://notice-ledger.dev/problems';
const JSON_TYPE = 'application/json';

/** A valid lab-result-ready v3 notice, one email and SMS, deadline a day ahead of `now`. */
export function validNotice(
  now: number,
  overrides: Record<string, unknown> = {},
  tag = 'hx',
): Record<string, unknown> {
  return {
    eventId: `evt_${tag}`,
    eventType: 'lab-result-ready',
    recipient: { id: `pat_${tag}`, email: `success+${tag}@simulator.amazonses.com`, phone: '+15557001234' },
    channels: ['email', 'sms'],
    template: { id: 'lab-result-ready', version: 'v3' },
    variables: { firstName: 'Hostilda' },
    deadline: new Date(now + 86_400_000).toISOString(),
    ...overrides,
  };
}

function json(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), 'utf8');
}

/** The notice's JSON with `bytes` spliced into the first name (raw bytes, so not UTF-8 any more). */
function withRawBytes(now: number, tag: string, bytes: readonly number[]): Buffer {
  const text = JSON.stringify(validNotice(now, { variables: { firstName: 'Bad@@Name' } }, tag));
  const [before, after] = text.split('@@') as [string, string];
  return Buffer.concat([Buffer.from(before), Buffer.from(bytes), Buffer.from(after)]);
}

export function hostileExamples(now: number, run = 'x'): HostileExample[] {
  const notice = (tag: string, overrides: Record<string, unknown>) =>
    validNotice(now, overrides, `${run}_${tag}`);
  const recipient = (tag: string, fields: Record<string, unknown>) => ({
    id: `pat_${run}_${tag}`,
    email: `success+${run}${tag}@simulator.amazonses.com`,
    phone: '+15557001234',
    ...fields,
  });
  const bad = (
    name: string,
    tag: string,
    overrides: Record<string, unknown>,
    status: number,
    errors: readonly (readonly [string, string])[],
    secrets: readonly string[] = [],
  ): HostileExample => ({
    name,
    method: 'POST',
    path: '/v1/notices',
    contentType: JSON_TYPE,
    body: json(notice(tag, overrides)),
    status,
    type: status === 422 ? `${PROBLEM}/unprocessable-notice` : `${PROBLEM}/invalid-request`,
    errors,
    secrets,
  });
  const invalidUtf8 = (name: string, tag: string, bytes: number[]): HostileExample => ({
    name,
    method: 'POST',
    path: '/v1/notices',
    contentType: JSON_TYPE,
    body: withRawBytes(now, `${run}_${tag}`, bytes),
    status: 400,
    type: `${PROBLEM}/malformed-body`,
    errors: [['', 'invalid_utf8']],
    secrets: [],
  });
  const email = (name: string, tag: string, address: string, code: string) =>
    bad(
      name,
      tag,
      { recipient: recipient(tag, { email: address }) },
      400,
      [['recipient.email', code]],
      // The address, and what a response would show of it once JSON-escaped: its printable part.
      [address, address.replace(/[^ -~]/gu, '')],
    );
  const phone = (name: string, tag: string, number: string, code: string) =>
    bad(
      name,
      tag,
      { recipient: recipient(tag, { phone: number }) },
      400,
      [['recipient.phone', code]],
      [number],
    );
  return [
    invalidUtf8('a 0xff byte in the body', 'u1', [0xff]),
    invalidUtf8('an overlong encoding (c0 af)', 'u2', [0xc0, 0xaf]),
    invalidUtf8('an encoded surrogate (ed a0 80)', 'u3', [0xed, 0xa0, 0x80]),
    invalidUtf8('a five-byte sequence (f8 88 80 80 80)', 'u4', [0xf8, 0x88, 0x80, 0x80, 0x80]),
    {
      name: 'a lone surrogate as a JSON escape',
      method: 'POST',
      path: '/v1/notices',
      contentType: JSON_TYPE,
      body: Buffer.from(
        JSON.stringify(notice('u5', { variables: { firstName: 'X' } })).replace('"X"', '"Bad\\ud800Name"'),
      ),
      status: 400,
      type: `${PROBLEM}/malformed-body`,
      errors: [['variables.firstName', 'invalid_utf8']],
      secrets: [],
    },
    email(
      'an email with NUL in the local part',
      'e1',
      'pat\u0000ient@example.com',
      'email_control_characters',
    ),
    email(
      'an email with BEL in the local part',
      'e2',
      'pat\u0007ient@example.com',
      'email_control_characters',
    ),
    email('an email with an ANSI escape', 'e3', '\u001b[31mpatient@example.com', 'email_control_characters'),
    email('an email with U+202E', 'e4', 'pat\u202eient@example.com', 'email_control_characters'),
    email('an email domain with an empty label (x..com)', 'e5', 'zorro@x..com', 'email_invalid_domain'),
    email('an email domain with an underscore', 'e6', 'zorro@exa_mple.com', 'email_invalid_domain'),
    email('an email with an address literal', 'e7', 'zorro@[127.0.0.1]', 'email_address_literal'),
    email('an email with a quoted local part', 'e8', '"quoted"@x.com', 'email_quoted_local_part'),
    email(
      'an email with a 65-octet local part',
      'e9',
      `${'q'.repeat(65)}@example.com`,
      'email_local_part_too_long',
    ),
    phone('a phone with spaces', 'p1', '+1 555 700 1234', 'phone_separators'),
    phone('a phone with parentheses', 'p2', '+1(555)7001234', 'phone_separators'),
    phone('a phone with a leading space', 'p3', ' +15557001234', 'phone_separators'),
    phone('a phone with a trailing newline', 'p4', '+15557001234\n', 'phone_control_characters'),
    bad('a whitespace-only eventId', 'w1', { eventId: '   ' }, 400, [['eventId', 'blank']]),
    bad('a whitespace-only eventType', 'w2', { eventType: '\t \u00a0' }, 400, [['eventType', 'blank']]),
    bad('a whitespace-only recipient.id', 'w3', { recipient: recipient('w3', { id: ' ' }) }, 400, [
      ['recipient.id', 'blank'],
    ]),
    bad('an eventId with a trailing space', 'w4', { eventId: `evt_${run}_w4 ` }, 400, [
      ['eventId', 'surrounding_whitespace'],
    ]),
    bad(
      'an email address as recipient.id',
      'c1',
      { recipient: recipient('c1', { id: 'jane.doe@example.com' }) },
      422,
      [['recipient.id', 'contact_data_in_identifier']],
      ['jane.doe@example.com'],
    ),
    bad(
      'a phone number as eventId',
      'c2',
      { eventId: '+15557009876' },
      422,
      [['eventId', 'contact_data_in_identifier']],
      ['+15557009876', '15557009876'],
    ),
    {
      name: 'a suppression PUT with free-text detail',
      method: 'PUT',
      path: '/v1/suppressions/sms/%2B15557001234',
      contentType: JSON_TYPE,
      body: json({ reason: 'patient_request', detail: 'Patient Hostilda phoned from 555-0199' }),
      status: 400,
      type: `${PROBLEM}/invalid-request`,
      errors: [['detail', 'free_text_not_accepted']],
      secrets: ['Hostilda', '555-0199'],
    },
  ];
}
