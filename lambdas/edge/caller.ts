import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { ConfigError } from '../contract/config-error.ts';
import {
  matchesPrincipal,
  normalisePrincipal,
  type PrincipalPattern,
  parsePrincipalPattern,
} from '../contract/principals.ts';
import type { CallerRole } from '../contract/routes.ts';
import type { Caller } from '../domain/caller.ts';
import type { Config } from './config.ts';
import { iamPrincipal } from './operator-requests.ts';

/**
 * Who a request is (docs/api.md "Callers"). Behind API Gateway's IAM authorisation the request
 * carries the signer's ARN (`requestContext.authorizer.iam.userArn`: an assumed-role session, an
 * IAM user, an account root); its normal form (contract/principals.ts: a session is its role) is
 * the caller's principal, and the role map of the settings gives its role: an auditor when an
 * `AUDITOR_PRINCIPALS` entry names it, else an operator when an `OPERATOR_PRINCIPALS` entry does,
 * else a submitter. Nothing a client sends (a header, a body field) is read: only what API
 * Gateway vouched for.
 *
 * A request without IAM context is the `UNSIGNED_CALLER_PRINCIPAL`'s when it is set (the local
 * stack without a caller header), else refused: in AWS every route the http function serves is
 * IAM-authorised, so such a request means a route deployed without it.
 */
export interface CallerDirectory {
  readonly operators: readonly PrincipalPattern[];
  readonly auditors: readonly PrincipalPattern[];
  /** The normal-form principal of a request without IAM context; undefined: refused. */
  readonly unsigned?: string | undefined;
}

export type CallerSettings = Pick<
  Config,
  'OPERATOR_PRINCIPALS' | 'AUDITOR_PRINCIPALS' | 'UNSIGNED_CALLER_PRINCIPAL'
>;

/** The role map of the settings, every entry checked; a malformed one stops the function, named. */
export function callerDirectory(config: CallerSettings): CallerDirectory {
  const problems: string[] = [];
  const patterns = (name: 'OPERATOR_PRINCIPALS' | 'AUDITOR_PRINCIPALS') =>
    config[name].flatMap((entry) => {
      const pattern = parsePrincipalPattern(entry);
      if (!pattern) problems.push(`${name}: not an IAM role, user or account ARN: ${entry}`);
      return pattern ? [pattern] : [];
    });
  const operators = patterns('OPERATOR_PRINCIPALS');
  const auditors = patterns('AUDITOR_PRINCIPALS');
  const unsignedArn = config.UNSIGNED_CALLER_PRINCIPAL;
  const unsigned = unsignedArn === undefined ? undefined : normalisePrincipal(unsignedArn);
  if (unsignedArn !== undefined && !unsigned) {
    problems.push(`UNSIGNED_CALLER_PRINCIPAL: not an IAM principal ARN: ${unsignedArn}`);
  }
  if (problems.length > 0) throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  return { operators, auditors, unsigned };
}

/** The role of a normal-form principal: auditor over operator (the lesser wins), else submitter. */
export function roleOf(principal: string, directory: CallerDirectory): CallerRole {
  if (directory.auditors.some((p) => matchesPrincipal(p, principal))) return 'auditor';
  if (directory.operators.some((p) => matchesPrincipal(p, principal))) return 'operator';
  return 'submitter';
}

export type Identified =
  | { readonly ok: true; readonly caller: Caller }
  /** No IAM context and no unsigned caller, or an ARN that names no IAM principal. */
  | { readonly ok: false; readonly reason: 'unsigned' | 'not_a_principal' };

export function identifyCaller(event: APIGatewayProxyEventV2, directory: CallerDirectory): Identified {
  const signed = iamPrincipal(event);
  const principal = signed === undefined ? directory.unsigned : normalisePrincipal(signed);
  if (principal === undefined)
    return { ok: false, reason: signed === undefined ? 'unsigned' : 'not_a_principal' };
  return { ok: true, caller: { principal, role: roleOf(principal, directory) } };
}
