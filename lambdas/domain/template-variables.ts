import { DEFAULT_VARIABLE_MAX_LENGTH, type TemplateDefinition, type VariableSpec } from './template.ts';

// The variables contract: what intake accepts for a template, and what a render may rely on.

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
export function isPresent(value: unknown): boolean {
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
