/**
 * S3 Object Lock as the local store's front (./front.ts) emulates it: a bucket's default
 * retention (`PutObjectLockConfiguration`), the retain-until date it gives each new object, and
 * whether an object is still retained (then neither overwritten nor deleted).
 */
import { element, S3_NS } from './xml.ts';

export type RetentionMode = 'GOVERNANCE' | 'COMPLIANCE';

/** A bucket's default retention (`PutObjectLockConfiguration`'s `Rule.DefaultRetention`): days or years. */
export type DefaultRetention =
  | { readonly mode: RetentionMode; readonly days: number }
  | { readonly mode: RetentionMode; readonly years: number };

export interface BucketLock {
  /** Object Lock enabled (at CreateBucket, or later by PutObjectLockConfiguration). */
  readonly enabled: true;
  readonly rule?: DefaultRetention;
}

/** AWS's bounds on a default retention period. */
const MAX_DAYS = 36_500;
const MAX_YEARS = 100;

/** Whether the object is under retention at `now` (compliance or governance: neither may be overwritten or deleted here). */
export function isRetained(object: { readonly retainUntil?: string } | undefined, now: number): boolean {
  return object?.retainUntil !== undefined && Date.parse(object.retainUntil) > now;
}

/** The retain-until date a new object gets from its bucket's default retention. */
export function retainUntil(rule: DefaultRetention, now: number): string {
  const at = new Date(now);
  if ('years' in rule) at.setUTCFullYear(at.getUTCFullYear() + rule.years);
  else at.setTime(at.getTime() + rule.days * 86_400_000);
  return at.toISOString();
}

/**
 * A `PutObjectLockConfiguration` body, read as S3 reads it: `ObjectLockEnabled` must be
 * `Enabled`; a rule has a mode and exactly one of Days and Years, a positive whole number within
 * AWS's bounds. Answers an S3 error code and message when it is not one.
 */
export function parseObjectLockConfiguration(
  xml: string,
):
  | { readonly lock: BucketLock }
  | { readonly error: 'MalformedXML' | 'InvalidArgument'; readonly message: string } {
  const value = (tag: string) => new RegExp(`<${tag}>\\s*([^<]*?)\\s*</${tag}>`).exec(xml)?.[1];
  if (!/<ObjectLockConfiguration[\s>]/.test(xml)) {
    return { error: 'MalformedXML', message: 'The XML you provided was not well-formed' };
  }
  if (value('ObjectLockEnabled') !== 'Enabled') {
    return { error: 'MalformedXML', message: 'ObjectLockEnabled must be Enabled' };
  }
  if (!/<Rule[\s>]/.test(xml)) return { lock: { enabled: true } };
  const mode = value('Mode');
  if (mode !== 'GOVERNANCE' && mode !== 'COMPLIANCE') {
    return { error: 'MalformedXML', message: 'Mode must be GOVERNANCE or COMPLIANCE' };
  }
  const days = value('Days');
  const years = value('Years');
  if ((days === undefined) === (years === undefined)) {
    return { error: 'MalformedXML', message: 'A default retention names Days or Years, not both' };
  }
  const n = Number(days ?? years);
  const max = days !== undefined ? MAX_DAYS : MAX_YEARS;
  if (!Number.isInteger(n) || n < 1 || n > max) {
    return {
      error: 'InvalidArgument',
      message: `Default retention period must be a positive integer up to ${max}`,
    };
  }
  return { lock: { enabled: true, rule: days !== undefined ? { mode, days: n } : { mode, years: n } } };
}

/** `GetObjectLockConfiguration`'s answer (the document's root element). */
export function objectLockConfigurationXml(lock: BucketLock): string {
  const rule = lock.rule
    ? `<Rule><DefaultRetention>${element('Mode', lock.rule.mode)}${
        'years' in lock.rule ? element('Years', lock.rule.years) : element('Days', lock.rule.days)
      }</DefaultRetention></Rule>`
    : '';
  return `<ObjectLockConfiguration xmlns="${S3_NS}"><ObjectLockEnabled>Enabled</ObjectLockEnabled>${rule}</ObjectLockConfiguration>`;
}
