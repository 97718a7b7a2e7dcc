/**
 * The IAM principals a caller is known by (docs/api.md "Callers"), written once for the http
 * function (which reads them from API Gateway's `requestContext.authorizer.iam.userArn`) and the
 * CDK (which refuses a malformed `operatorPrincipals` / `auditorPrincipals` entry at synth).
 *
 * A caller is its **principal**: the IAM role, user or account root behind the signature, in one
 * normal form, `arn:<partition>:iam::<account>:role/<name>` (`user/<name>`, `root`):
 * - an assumed-role session (`arn:aws:sts::<account>:assumed-role/<role>/<session>`, what a
 *   Lambda function, an ECS task or an IAM Identity Center user signs as) is its role, so that a
 *   service's many sessions are one submitter and an SSO user's session name (often an e-mail
 *   address) is never recorded as one;
 * - a role's or user's path is dropped: a session ARN carries none, and the name alone is unique
 *   in the account;
 * - a federated user (`arn:aws:sts::<account>:federated-user/<name>`) stays as it is.
 * Anything else (an ARN of another service, a malformed one) is no principal: such a caller is
 * refused.
 */

/** Characters IAM allows in role, user and session names. */
const NAME = '[\\w+=,.@-]+';
const ARN = /^arn:(aws[a-z-]*):(iam|sts)::(\d{12}):(.+)$/;
const ROLE_OR_USER = new RegExp(`^(role|user)/(?:[\\x21-\\x7e]*/)?(${NAME})$`);
const ASSUMED_ROLE = new RegExp(`^assumed-role/(${NAME})/${NAME}$`);
const FEDERATED_USER = new RegExp(`^federated-user/${NAME}$`);

/**
 * The normal form of a principal ARN (see above), or undefined when `arn` names no IAM principal.
 * Idempotent: a normal form is its own normal form.
 */
export function normalisePrincipal(arn: string): string | undefined {
  const m = ARN.exec(arn);
  if (!m) return undefined;
  const [, partition, service, account, resource] = m as unknown as [string, string, string, string, string];
  const iam = (rest: string) => `arn:${partition}:iam::${account}:${rest}`;
  if (service === 'iam') {
    if (resource === 'root') return iam('root');
    const named = ROLE_OR_USER.exec(resource);
    return named ? iam(`${named[1]}/${named[2]}`) : undefined;
  }
  const session = ASSUMED_ROLE.exec(resource);
  if (session) return iam(`role/${session[1]}`);
  return FEDERATED_USER.test(resource) ? arn : undefined;
}

/**
 * An entry of `OPERATOR_PRINCIPALS` / `AUDITOR_PRINCIPALS`: a principal ARN in any of the forms
 * above (a role's ARN as IAM shows it, path included, is fine), or one whose name ends in `*`,
 * matching every principal of that account and kind whose name starts with the rest
 * (`arn:aws:iam::123456789012:role/AWSReservedSSO_NoticeLedgerOperator_*`: IAM Identity Center
 * gives a permission set's role a suffix of its own in every account).
 */
export interface PrincipalPattern {
  /** The normal form, without the `*` of a prefix pattern. */
  readonly principal: string;
  readonly prefix: boolean;
}

/** A role map entry read, or undefined when it is not one (the caller names the setting). */
export function parsePrincipalPattern(entry: string): PrincipalPattern | undefined {
  const prefix = entry.endsWith('*');
  // A prefix pattern is checked with a name in place of its star: `role/Ops_*` → `role/Ops_x`.
  const probe = prefix ? `${entry.slice(0, -1)}x` : entry;
  const normal = normalisePrincipal(probe);
  if (!normal) return undefined;
  if (!prefix) return { principal: normal, prefix: false };
  if (!/^(role|user)\//.test(probe.split(':').slice(5).join(':'))) return undefined;
  return { principal: normal.slice(0, -1), prefix: true };
}

/** Whether the normal-form `principal` is the one `pattern` names (or one it names by prefix). */
export function matchesPrincipal(pattern: PrincipalPattern, principal: string): boolean {
  return pattern.prefix ? principal.startsWith(pattern.principal) : principal === pattern.principal;
}

/** The entries of a role map list that are not principals (empty: every entry reads). */
export function invalidPrincipalEntries(entries: readonly string[]): string[] {
  return entries.filter((entry) => parsePrincipalPattern(entry) === undefined);
}

/**
 * The settings of the role map, declared here beside the rules that read them and spread into
 * ./settings.ts (OPERATOR_SETTINGS, WIRING_SETTINGS), whose shapes they satisfy there.
 */
export const CALLER_SETTINGS = {
  OPERATOR_PRINCIPALS: {
    kind: 'list',
    description:
      'comma-separated IAM principals (role or user ARNs; a trailing * matches names by prefix) whose ' +
      'requests act on every notice; anyone else signed is a submitter, who sees only what it submitted ' +
      '(local stack default: arn:aws:iam::000000000000:role/notice-ledger-local-operator)',
  },
  AUDITOR_PRINCIPALS: {
    kind: 'list',
    description:
      'comma-separated IAM principals, as OPERATOR_PRINCIPALS, that read every notice, the list and ' +
      'suppressions and act on none (refused 403); listed in both: auditor (local stack default: ' +
      'arn:aws:iam::000000000000:role/notice-ledger-local-auditor)',
  },
} as const;

export const CALLER_WIRING_SETTINGS = {
  UNSIGNED_CALLER_PRINCIPAL: {
    kind: 'text',
    description:
      'who a request without IAM context is (the local stack without an x-notice-ledger-caller header: ' +
      'arn:aws:iam::000000000000:role/notice-ledger-local-operator); unset, as in AWS, where every API ' +
      'route is IAM-authorised: such a request is refused 403',
  },
} as const;
