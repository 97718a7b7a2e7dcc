import { DomainError } from './errors.ts';
import type { SmsShape } from './intent.ts';
import type { Priority } from './priority.ts';

export type { SmsShape } from './intent.ts';

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

export const VariableType = {
  string: 'string',
  httpsUrl: 'https_url',
  number: 'number',
  /** ISO 8601 calendar date (`2026-12-01`) or date-time (`2026-12-01T09:00`, optional offset). */
  date: 'date',
} as const;

export type VariableType = (typeof VariableType)[keyof typeof VariableType];

export interface VariableSpec {
  readonly type: VariableType;
  readonly required: boolean;
  /**
   * In Unicode code points; applies to every type but `number`. When absent,
   * `DEFAULT_VARIABLE_MAX_LENGTH` applies: variables are kept (encrypted) until the channel is
   * terminal, and an unbounded value would bloat every ledger write.
   */
  readonly maxLength?: number;
}

export const DEFAULT_VARIABLE_MAX_LENGTH = 1000;

export interface TemplateDefinition {
  /** kebab-case, e.g. `lab-result-ready`. */
  readonly id: string;
  /** `v3`, `v3.1`, `v3.1.2`. A released version is immutable: change copy by adding a version. */
  readonly version: string;
  readonly description: string;
  /** The closed variables contract: anything not declared here is rejected at intake. */
  readonly variables: Readonly<Record<string, VariableSpec>>;
  readonly email?: { readonly subject: string; readonly text: string; readonly html: string };
  readonly sms?: { readonly text: string };
  /** Static text (not a template) appended after the rendered body of that channel. */
  readonly disclaimer?: { readonly email?: string; readonly sms?: string };
  /** The lane of its notices when a request names none (docs/architecture.md §11); absent: standard. */
  readonly priority?: Priority;
}

export interface TemplateCatalog {
  lookup(id: string, version: string): TemplateDefinition | undefined;
  list(): readonly TemplateDefinition[];
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

export const TemplateRenderErrorCode = {
  channelMissing: 'template_channel_missing',
  syntax: 'template_syntax_error',
  variablesInvalid: 'template_variables_invalid',
} as const;

export type TemplateRenderErrorCode = (typeof TemplateRenderErrorCode)[keyof typeof TemplateRenderErrorCode];

/**
 * Rendering cannot produce a correct message. Messages name templates, channels, variable
 * names and violation codes only, never variable values, so the error is safe to log.
 */
export class TemplateRenderError extends DomainError {
  readonly templateId: string;
  readonly templateVersion: string;
  constructor(
    code: TemplateRenderErrorCode,
    template: Pick<TemplateDefinition, 'id' | 'version'>,
    message: string,
  ) {
    super(code, `${template.id} ${template.version}: ${message}`);
    this.name = 'TemplateRenderError';
    this.templateId = template.id;
    this.templateVersion = template.version;
  }
}

/** The catalog was built from definitions that fail `lintTemplate` or repeat an (id, version). */
export class TemplateDefinitionError extends DomainError {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super('template_definition_invalid', `invalid template catalog: ${problems.join('; ')}`);
    this.name = 'TemplateDefinitionError';
    this.problems = problems;
  }
}

// ---------------------------------------------------------------------------------------------
// Variables contract
// ---------------------------------------------------------------------------------------------

export const VariableViolationCode = {
  missing: 'missing',
  wrongType: 'wrong_type',
  notHttpsUrl: 'not_https_url',
  tooLong: 'too_long',
  unknownVariable: 'unknown_variable',
  /** Control, line-separator or bidi-override characters: they could break a subject line or spoof text. */
  invalidCharacters: 'invalid_characters',
} as const;

export type VariableViolationCode = (typeof VariableViolationCode)[keyof typeof VariableViolationCode];

export interface VariableViolation {
  /** `variables.<name>`, matching the intake request body. */
  readonly path: string;
  readonly code: VariableViolationCode;
  /** Names the variable and the rule; never contains the value (it is personal data). */
  readonly message: string;
}

/**
 * An empty or blank string counts as absent: a business system that sends `""` for "no portal
 * link" gets the same message as one that omits the key, and a required name is never blank.
 */
function isPresent(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  return typeof value !== 'string' || value.trim() !== '';
}

const FORBIDDEN_CHARACTERS = /[\p{Cc}\p{Zl}\p{Zp}\u202A-\u202E\u2066-\u2069]/u;

function codePointLength(value: string): number {
  let n = 0;
  for (const _ of value) n++;
  return n;
}

function isHttpsUrl(value: string): boolean {
  // The URL parser trims and percent-encodes whitespace, but the raw value is what gets rendered.
  if (/\s/.test(value) || !URL.canParse(value)) return false;
  const url = new URL(value);
  return url.protocol === 'https:' && url.hostname !== '' && url.username === '' && url.password === '';
}

const ISO_DATE =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))?)?$/;

/**
 * A date-time without an offset is accepted as the local time of the appointment's place;
 * the value is rendered as given, so no time-zone conversion can shift it.
 */
function isIsoDate(value: string): boolean {
  const m = ISO_DATE.exec(value);
  if (!m) return false;
  const [, y, mo, d, h, mi, s, oh, om] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1) return false;
  // Day 0 of the next month is the last day of this one; Date.UTC handles leap years.
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return false;
  if (h !== undefined && (Number(h) > 23 || Number(mi) > 59)) return false;
  if (s !== undefined && Number(s) > 59) return false;
  if (oh !== undefined && (Number(oh) > 23 || Number(om) > 59)) return false;
  return true;
}

function checkValue(name: string, spec: VariableSpec, value: unknown): VariableViolation | undefined {
  const path = `variables.${name}`;
  const violation = (code: VariableViolationCode, message: string): VariableViolation => ({
    path,
    code,
    message: `${name} ${message}`,
  });

  if (spec.type === 'number') {
    return typeof value === 'number' && Number.isFinite(value)
      ? undefined
      : violation('wrong_type', 'must be a finite number');
  }
  if (typeof value !== 'string') {
    const expected =
      spec.type === 'https_url' ? 'an https URL string' : spec.type === 'date' ? 'a date string' : 'a string';
    return violation('wrong_type', `must be ${expected}`);
  }
  if (FORBIDDEN_CHARACTERS.test(value)) {
    return violation(
      'invalid_characters',
      'must not contain control, line-separator or bidi-control characters',
    );
  }
  const maxLength = spec.maxLength ?? DEFAULT_VARIABLE_MAX_LENGTH;
  if (codePointLength(value) > maxLength)
    return violation('too_long', `must be at most ${maxLength} characters`);
  if (spec.type === 'https_url' && !isHttpsUrl(value)) {
    return violation('not_https_url', 'must be an absolute https URL without credentials');
  }
  if (spec.type === 'date' && !isIsoDate(value)) {
    return violation('wrong_type', 'must be an ISO 8601 date (YYYY-MM-DD) or date-time');
  }
  return undefined;
}

/**
 * Checks `variables` against the template's closed contract. Violations come in contract
 * order, then unknown names in input order; an empty list means the variables may be rendered.
 */
export function checkVariables(
  template: TemplateDefinition,
  variables: Readonly<Record<string, unknown>>,
): VariableViolation[] {
  if (typeof variables !== 'object' || variables === null || Array.isArray(variables)) {
    return [{ path: 'variables', code: 'wrong_type', message: 'variables must be an object' }];
  }
  const violations: VariableViolation[] = [];
  for (const [name, spec] of Object.entries(template.variables)) {
    const value = Object.hasOwn(variables, name) ? variables[name] : undefined;
    if (!isPresent(value)) {
      if (spec.required)
        violations.push({ path: `variables.${name}`, code: 'missing', message: `${name} is required` });
      continue;
    }
    const violation = checkValue(name, spec, value);
    if (violation) violations.push(violation);
  }
  for (const name of Object.keys(variables)) {
    // hasOwn, not `in`: `constructor` or `__proto__` must not pass as declared via the prototype.
    if (!Object.hasOwn(template.variables, name)) {
      violations.push({
        path: `variables.${name}`,
        code: 'unknown_variable',
        message: `${name} is not a variable of ${template.id} ${template.version}`,
      });
    }
  }
  return violations;
}

// ---------------------------------------------------------------------------------------------
// Template syntax: `{{name}}` and `{{#name}}…{{/name}}`, nothing else
// ---------------------------------------------------------------------------------------------

type TemplateNode =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'variable'; readonly name: string }
  | { readonly kind: 'section'; readonly name: string; readonly body: readonly TemplateNode[] };

class TemplateSyntaxError extends Error {}

const TAG = /\{\{([#/]?)([A-Za-z][A-Za-z0-9_]*)\}\}/g;

/** Bodies come from the repository, so the cache is bounded by the catalog's size. */
const parsedBodies = new Map<string, readonly TemplateNode[]>();

function parseBody(source: string): readonly TemplateNode[] {
  const cached = parsedBodies.get(source);
  if (cached) return cached;

  const root: TemplateNode[] = [];
  const open: { name: string; body: TemplateNode[] }[] = [];
  let current = root;
  let last = 0;
  const pushText = (text: string): void => {
    // A brace pair left in literal text is a malformed tag (`{{ name }}`, `{firstName}}`):
    // rendering it would show raw syntax to a patient.
    if (text.includes('{{') || text.includes('}}')) throw new TemplateSyntaxError('malformed tag');
    if (text !== '') current.push({ kind: 'text', text });
  };

  for (const match of source.matchAll(TAG)) {
    pushText(source.slice(last, match.index));
    last = match.index + match[0].length;
    const [, sigil, name = ''] = match;
    if (sigil === '#') {
      const section = { name, body: [] as TemplateNode[] };
      current.push({ kind: 'section', name, body: section.body });
      open.push(section);
      current = section.body;
    } else if (sigil === '/') {
      const closing = open.pop();
      if (closing?.name !== name) throw new TemplateSyntaxError(`unexpected {{/${name}}}`);
      current = open.at(-1)?.body ?? root;
    } else {
      current.push({ kind: 'variable', name });
    }
  }
  pushText(source.slice(last));
  const unclosed = open.at(-1);
  if (unclosed) throw new TemplateSyntaxError(`unclosed {{#${unclosed.name}}}`);

  parsedBodies.set(source, root);
  return root;
}

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

type Escape = (value: string) => string;
const verbatim: Escape = (value) => value;

function renderNodes(
  template: TemplateDefinition,
  nodes: readonly TemplateNode[],
  variables: Readonly<Record<string, unknown>>,
  encode: Escape,
): string {
  let out = '';
  for (const node of nodes) {
    if (node.kind === 'text') {
      out += node.text;
      continue;
    }
    const value = Object.hasOwn(variables, node.name) ? variables[node.name] : undefined;
    if (node.kind === 'section') {
      if (isPresent(value)) out += renderNodes(template, node.body, variables, encode);
      continue;
    }
    // Unreachable for a catalog that passed lintTemplate and variables that passed checkVariables.
    if (typeof value === 'number') out += encode(String(value));
    else if (typeof value === 'string' && isPresent(value)) out += encode(value);
    else {
      throw new TemplateRenderError(
        'template_variables_invalid',
        template,
        `${node.name} is used outside a {{#${node.name}}} section but has no value`,
      );
    }
  }
  return out;
}

function renderBody(
  template: TemplateDefinition,
  body: string,
  variables: Readonly<Record<string, unknown>>,
  encode: Escape,
): string {
  let nodes: readonly TemplateNode[];
  try {
    nodes = parseBody(body);
  } catch (error) {
    if (error instanceof TemplateSyntaxError)
      throw new TemplateRenderError('template_syntax_error', template, error.message);
    throw error;
  }
  return renderNodes(template, nodes, variables, encode);
}

/**
 * Intake already checked the contract; checking again costs microseconds and guarantees a
 * worker never sends a message with a hole in it (a row written by a buggy intake, a variable
 * tampered with in storage).
 */
function assertVariables(template: TemplateDefinition, variables: Readonly<Record<string, unknown>>): void {
  const violations = checkVariables(template, variables);
  if (violations.length > 0) {
    throw new TemplateRenderError(
      'template_variables_invalid',
      template,
      violations.map((v) => `${v.path} ${v.code}`).join(', '),
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------------

export interface RenderedEmail {
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

export interface RenderedSms {
  readonly text: string;
}

function appendHtmlDisclaimer(html: string, disclaimer: string): string {
  const paragraph = `<p style="color:#555555;font-size:12px;line-height:1.4">${escapeHtml(disclaimer)}</p>\n`;
  // Inside <body> when the template is a full document, so clients that strip what follows
  // </body> still show it.
  const at = html.toLowerCase().lastIndexOf('</body>');
  if (at === -1) return `${html.trimEnd()}\n${paragraph}`;
  return `${html.slice(0, at)}${paragraph}${html.slice(at)}`;
}

export function renderEmail(
  template: TemplateDefinition,
  variables: Readonly<Record<string, unknown>>,
): RenderedEmail {
  const email = template.email;
  if (!email) throw new TemplateRenderError('template_channel_missing', template, 'no email body');
  assertVariables(template, variables);

  const subject = renderBody(template, email.subject, variables, verbatim);
  let text = renderBody(template, email.text, variables, verbatim).trimEnd();
  let html = renderBody(template, email.html, variables, escapeHtml);
  const disclaimer = template.disclaimer?.email;
  if (disclaimer) {
    text = `${text}\n\n${disclaimer}`;
    html = appendHtmlDisclaimer(html, disclaimer);
  }
  return { subject, text: `${text}\n`, html };
}

export function renderSms(
  template: TemplateDefinition,
  variables: Readonly<Record<string, unknown>>,
): RenderedSms {
  const sms = template.sms;
  if (!sms) throw new TemplateRenderError('template_channel_missing', template, 'no sms body');
  assertVariables(template, variables);

  // No trailing newline: in SMS every character is billed.
  const text = renderBody(template, sms.text, variables, verbatim).trimEnd();
  const disclaimer = template.disclaimer?.sms;
  return { text: disclaimer ? `${text}\n${disclaimer}` : text };
}

// ---------------------------------------------------------------------------------------------
// Catalog self-check
// ---------------------------------------------------------------------------------------------

const TEMPLATE_ID = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const TEMPLATE_VERSION = /^v\d+(?:\.\d+){0,2}$/;
const VARIABLE_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/** Every body of a template, labelled for problem messages. */
export function templateBodies(
  template: TemplateDefinition,
): { readonly label: string; readonly body: string }[] {
  const bodies: { label: string; body: string }[] = [];
  if (template.email) {
    bodies.push({ label: 'email.subject', body: template.email.subject });
    bodies.push({ label: 'email.text', body: template.email.text });
    bodies.push({ label: 'email.html', body: template.email.html });
  }
  if (template.sms) bodies.push({ label: 'sms.text', body: template.sms.text });
  return bodies;
}

/**
 * Problems that would otherwise surface at send time, as human-readable strings (they name
 * templates and variables, never values). Empty means the definition is sound:
 * - every body parses, and every `{{name}}` / `{{#name}}` is declared in the contract;
 * - every declared variable is used by some body (the contract is also a data-minimisation
 *   promise: never collect a value no message shows);
 * - an optional variable is only substituted inside its own `{{#name}}` section, so an absent
 *   value never leaves an empty slot.
 */
export function lintTemplate(template: TemplateDefinition): string[] {
  const where = `${template.id} ${template.version}`;
  const problems: string[] = [];
  if (!TEMPLATE_ID.test(template.id)) problems.push(`${where}: id must be kebab-case`);
  if (!TEMPLATE_VERSION.test(template.version))
    problems.push(`${where}: version must look like v3 or v3.1.2`);
  if (!template.email && !template.sms) problems.push(`${where}: no channel body`);

  for (const [name, spec] of Object.entries(template.variables)) {
    if (!VARIABLE_NAME.test(name))
      problems.push(`${where}: variable name ${JSON.stringify(name)} is not an identifier`);
    if (spec.maxLength !== undefined && !(Number.isInteger(spec.maxLength) && spec.maxLength > 0)) {
      problems.push(`${where}: ${name}.maxLength must be a positive integer`);
    }
  }

  const used = new Set<string>();
  const walk = (label: string, nodes: readonly TemplateNode[], guarded: ReadonlySet<string>): void => {
    for (const node of nodes) {
      if (node.kind === 'text') continue;
      used.add(node.name);
      const spec = Object.hasOwn(template.variables, node.name) ? template.variables[node.name] : undefined;
      if (!spec) {
        problems.push(`${where}: ${label} uses undeclared variable ${node.name}`);
        continue;
      }
      if (node.kind === 'section') {
        walk(label, node.body, new Set([...guarded, node.name]));
      } else if (!spec.required && !guarded.has(node.name)) {
        problems.push(`${where}: ${label} uses optional variable ${node.name} outside {{#${node.name}}}`);
      }
    }
  };
  for (const { label, body } of templateBodies(template)) {
    if (body.trim() === '') {
      problems.push(`${where}: ${label} is empty`);
      continue;
    }
    try {
      walk(label, parseBody(body), new Set());
    } catch (error) {
      if (!(error instanceof TemplateSyntaxError)) throw error;
      problems.push(`${where}: ${label}: ${error.message}`);
    }
  }
  if (template.email && /[\r\n]/.test(template.email.subject)) {
    problems.push(`${where}: email.subject must be a single line`);
  }

  for (const name of Object.keys(template.variables)) {
    if (!used.has(name)) problems.push(`${where}: variable ${name} is declared but no body uses it`);
  }

  for (const [channel, text] of Object.entries(template.disclaimer ?? {})) {
    if (text === undefined) continue;
    if (text.includes('{{')) problems.push(`${where}: disclaimer.${channel} is static text, not a template`);
    if (!(channel === 'email' ? template.email : template.sms)) {
      problems.push(`${where}: disclaimer.${channel} without a ${channel} body`);
    }
  }
  return problems;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/**
 * Builds the catalog once at module load. An invalid definition throws here, on the cold
 * start of every function that bundles it (and in the unit tests), rather than when a worker
 * first tries to send with it. Definitions are frozen: a released version is immutable.
 */
export function createTemplateCatalog(definitions: readonly TemplateDefinition[]): TemplateCatalog {
  const problems: string[] = [];
  const byKey = new Map<string, TemplateDefinition>();
  for (const definition of definitions) {
    problems.push(...lintTemplate(definition));
    // The regexes above forbid a space in id and version, so this key is unambiguous.
    const key = `${definition.id} ${definition.version}`;
    if (byKey.has(key)) problems.push(`${key}: defined more than once`);
    byKey.set(key, deepFreeze(definition));
  }
  if (problems.length > 0) throw new TemplateDefinitionError(problems);

  const all = Object.freeze([...byKey.values()]);
  return {
    lookup: (id, version) => byKey.get(`${id} ${version}`),
    list: () => all,
  };
}

// ---------------------------------------------------------------------------------------------
// SMS length (3GPP TS 23.038 GSM 7-bit default alphabet)
// ---------------------------------------------------------------------------------------------

/** The basic table without ESC (0x1B), which is never a character of its own. */
const GSM7_BASIC = new Set(
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà',
);
/** Sent as ESC + code: two septets each. */
const GSM7_EXTENSION = new Set('\f^{}\\[~]|€');

const GSM7_SINGLE = 160;
/** 160 minus the 7 septets of the concatenation header (UDH). */
const GSM7_PART = 153;
const UCS2_SINGLE = 70;
const UCS2_PART = 67;

/**
 * Encoding and segment count a carrier will bill for `text`.
 * - GSM-7 when every character is in the default alphabet or its extension table; otherwise the
 *   whole message is UCS-2 (in practice UTF-16: astral characters take two code units).
 * - `characters` is the length in the encoding's units: septets for GSM-7 (an extension character
 *   counts 2), UTF-16 code units for UCS-2. That is the number compared with 160/153 or 70/67.
 * - Parts are packed greedily and an escape pair or a surrogate pair is never split across
 *   parts, so a long message can need one more part than `ceil(characters / 153)`.
 * - Empty text is 0 segments: there is nothing to send (providers reject an empty body).
 */
export function smsShape(text: string): SmsShape {
  const chars = [...text];
  const gsm = chars.every((c) => GSM7_BASIC.has(c) || GSM7_EXTENSION.has(c));
  // A lone surrogate is one code unit; a pair is one code point of length 2.
  const cost = gsm ? (c: string) => (GSM7_EXTENSION.has(c) ? 2 : 1) : (c: string) => c.length;
  const encoding = gsm ? 'GSM-7' : 'UCS-2';
  const single = gsm ? GSM7_SINGLE : UCS2_SINGLE;
  const part = gsm ? GSM7_PART : UCS2_PART;

  let characters = 0;
  for (const c of chars) characters += cost(c);
  if (characters === 0) return { encoding, segments: 0, characters };
  if (characters <= single) return { encoding, segments: 1, characters };

  let segments = 1;
  let used = 0;
  for (const c of chars) {
    const units = cost(c);
    if (used + units > part) {
      segments++;
      used = 0;
    }
    used += units;
  }
  return { encoding, segments, characters };
}
