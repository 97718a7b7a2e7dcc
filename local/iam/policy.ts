/**
 * IAM's evaluation of one role's identity policy, as far as the local stack needs it: an explicit
 * Deny wins, otherwise some Allow must match the action, the resource and every condition;
 * nothing matching is an implicit deny. Action and resource patterns take `*` and `?`; actions
 * compare without case, resources with. Conditions: the operators below, with IAM's rule that a
 * key absent from the request fails a positive operator and passes a negated one (`…IfExists`:
 * an absent key passes).
 */
import { instantiate, type LocalPlace } from './resources.ts';

/** A statement of the role policies file (./role-policies.json): placeholders not yet put in. */
export interface PolicyStatement {
  readonly sid?: string;
  readonly effect: 'Allow' | 'Deny';
  readonly actions: readonly string[];
  readonly resources: readonly string[];
  /** operator → condition key → values (any of them). */
  readonly conditions?: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>;
}

/** One thing IAM authorizes for a call: an action on a resource, with the call's condition keys. */
export interface AuthorizationRequest {
  readonly action: string;
  /**
   * The resource's ARN; several: any one of them authorizes (the SES identity that covers a
   * From address is the address's or its domain's); `undefined`: the call does not name it
   * locally (a KMS Decrypt, whose key is inside the ciphertext), so any granted resource passes.
   */
  readonly resource: string | readonly string[] | undefined;
  /**
   * Condition keys of the request (lower or mixed case; compared without case); a multivalued
   * key (`dynamodb:LeadingKeys`: every partition key a call names) as a list.
   */
  readonly context?: Readonly<Record<string, string | readonly string[]>>;
}

export type Decision =
  | { readonly allowed: true }
  | {
      readonly allowed: false;
      readonly request: AuthorizationRequest;
      /** `explicit`: a Deny statement matched; `implicit`: no Allow did. */
      readonly deny: 'explicit' | 'implicit';
    };

/** The operators the evaluator understands (and `…IfExists` of each): a file with another is refused. */
export const CONDITION_OPERATORS = [
  'StringEquals',
  'StringNotEquals',
  'StringEqualsIgnoreCase',
  'StringNotEqualsIgnoreCase',
  'StringLike',
  'StringNotLike',
  'ArnEquals',
  'ArnLike',
  'ArnNotEquals',
  'ArnNotLike',
  'Bool',
] as const;

interface ConcreteStatement {
  readonly effect: 'Allow' | 'Deny';
  readonly actions: readonly RegExp[];
  readonly resources: readonly RegExp[];
  readonly conditions: readonly { operator: string; key: string; values: readonly string[] }[];
}

/** A role's statements with the local stack's values in (./resources.ts), ready to evaluate. */
export class RolePolicy {
  readonly #statements: readonly ConcreteStatement[];

  constructor(statements: readonly PolicyStatement[], place: LocalPlace) {
    this.#statements = statements.map((s) => concrete(s, place));
  }

  /** Every request must be allowed; the first that is not is the decision. */
  authorize(requests: readonly AuthorizationRequest[]): Decision {
    for (const request of requests) {
      const deny = this.#decide(request);
      if (deny) return { allowed: false, request, deny };
    }
    return { allowed: true };
  }

  #decide(request: AuthorizationRequest): 'explicit' | 'implicit' | undefined {
    const candidates =
      request.resource === undefined
        ? [undefined]
        : typeof request.resource === 'string'
          ? [request.resource]
          : request.resource;
    const context = lowerKeys(request.context ?? {});
    const matching = (effect: 'Allow' | 'Deny', resource: string | undefined) =>
      this.#statements.some(
        (s) =>
          s.effect === effect &&
          s.actions.some((a) => a.test(request.action)) &&
          (resource === undefined ? s.resources.length > 0 : s.resources.some((r) => r.test(resource))) &&
          s.conditions.every((c) => conditionHolds(c, context)),
      );
    if (candidates.some((r) => matching('Deny', r))) return 'explicit';
    return candidates.some((r) => matching('Allow', r)) ? undefined : 'implicit';
  }
}

function concrete(statement: PolicyStatement, place: LocalPlace): ConcreteStatement {
  return {
    effect: statement.effect,
    actions: statement.actions.map((a) => pattern(a, 'i')),
    // A resource naming something the local stack lacks matches nothing (see ./resources.ts).
    resources: statement.resources.flatMap((r) => {
      const value = instantiate(r, place);
      return value === undefined ? [] : [pattern(value, '')];
    }),
    conditions: Object.entries(statement.conditions ?? {}).flatMap(([operator, keys]) => {
      if (!(CONDITION_OPERATORS as readonly string[]).includes(baseOperator(operator))) {
        throw new Error(`role policies: condition operator ${operator} is not evaluated locally`);
      }
      return Object.entries(keys).map(([key, values]) => ({
        operator,
        key: key.toLowerCase(),
        values: values.flatMap((v) => instantiate(v, place) ?? []),
      }));
    }),
  };
}

/** An operator without its set qualifier (`ForAllValues:`, `ForAnyValue:`) and `IfExists`. */
function baseOperator(operator: string): string {
  return operator.replace(/^(ForAllValues|ForAnyValue):/, '').replace(/IfExists$/, '');
}

/**
 * IAM's set operators on a multivalued key: `ForAllValues:` holds when every value of the request
 * matches (so also when the key is absent or empty), `ForAnyValue:` when one does (never when
 * absent). A plain operator compares a single value; given a list it holds only for exactly one.
 */
function conditionHolds(
  condition: { operator: string; key: string; values: readonly string[] },
  context: Readonly<Record<string, string | readonly string[]>>,
): boolean {
  const set = /^(ForAllValues|ForAnyValue):/.exec(condition.operator)?.[1];
  const actual = context[condition.key];
  if (set !== undefined) {
    const values = actual === undefined ? [] : typeof actual === 'string' ? [actual] : actual;
    const one = (value: string) => singleConditionHolds(condition, value);
    return set === 'ForAllValues' ? values.every(one) : values.some(one);
  }
  if (actual !== undefined && typeof actual !== 'string') {
    return actual.length === 1 && singleConditionHolds(condition, actual[0]);
  }
  return singleConditionHolds(condition, actual);
}

function singleConditionHolds(
  condition: { operator: string; values: readonly string[] },
  actual: string | undefined,
): boolean {
  const ifExists = condition.operator.endsWith('IfExists');
  const operator = baseOperator(condition.operator);
  const negated = /Not/.test(operator);
  if (actual === undefined) return ifExists || negated;
  const matches = condition.values.some((expected) => {
    switch (operator) {
      case 'StringEquals':
      case 'StringNotEquals':
      case 'ArnEquals':
      case 'ArnNotEquals':
        return actual === expected;
      case 'StringEqualsIgnoreCase':
      case 'StringNotEqualsIgnoreCase':
        return actual.toLowerCase() === expected.toLowerCase();
      case 'Bool':
        return actual.toLowerCase() === expected.toLowerCase();
      default:
        return pattern(expected, '').test(actual);
    }
  });
  return negated ? !matches : matches;
}

/** An IAM pattern (`*`: any run of characters, `?`: one) as an anchored expression. */
function pattern(text: string, flags: string): RegExp {
  const body = text
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`, flags);
}

function lowerKeys(
  context: Readonly<Record<string, string | readonly string[]>>,
): Record<string, string | readonly string[]> {
  return Object.fromEntries(Object.entries(context).map(([k, v]) => [k.toLowerCase(), v]));
}
