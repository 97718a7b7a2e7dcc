import { createHash } from 'node:crypto';
import type { APIGatewayEventRequestContextIAMAuthorizer } from 'aws-lambda';
import { normalisePrincipal } from '../lambdas/contract/principals.ts';
import { LOCAL_ACCOUNT_ID } from './lambda-context.ts';

/**
 * Who calls the local stack (README "Callers"). API Gateway knows a caller by its SigV4 signature
 * and hands the function `requestContext.authorizer.iam`; the local gateway knows it by a header
 * naming the principal ARN, and hands the function the same shape (`iamAuthorizer`). Without the
 * header a request carries no IAM context, as before callers were told apart: the http function
 * takes it for `UNSIGNED_CALLER_PRINCIPAL`, which the local stack sets to its operator, and an
 * act's actor is still the body's `actor` or `local`.
 */

/** The request header that names the caller on the local stack; the gateway removes it. */
export const CALLER_HEADER = 'x-notice-ledger-caller';

/** The local stack's operator: every request without a caller header, and the default operator role map. */
export const LOCAL_OPERATOR_ROLE = `arn:aws:iam::${LOCAL_ACCOUNT_ID}:role/notice-ledger-local-operator`;
/** The local stack's default auditor role map (AUDITOR_PRINCIPALS). */
export const LOCAL_AUDITOR_ROLE = `arn:aws:iam::${LOCAL_ACCOUNT_ID}:role/notice-ledger-local-auditor`;

/** `AROA` + 17 characters: a unique id as IAM shows one, derived from the ARN (stable across runs). */
function uniqueId(prefix: string, of: string): string {
  const digest = createHash('sha256').update(of).digest();
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let id = prefix;
  for (let i = 0; i < 17; i++) id += alphabet[(digest[i] as number) % 32];
  return id;
}

/**
 * What API Gateway's IAM authorisation passes for a request signed by `userArn`
 * (`requestContext.authorizer.iam`, payload format 2.0): the account, the caller's unique id
 * (`AROA…:<session>` for an assumed role, `AIDA…` for a user, `<account>:<name>` for a federated
 * user, the account for its root), an
 * access key id of the kind the principal signs with (temporary `ASIA…` for sessions), no
 * Cognito identity, no organisation. Undefined when `userArn` names no IAM principal.
 */
export function iamAuthorizer(userArn: string): APIGatewayEventRequestContextIAMAuthorizer | undefined {
  const principal = normalisePrincipal(userArn);
  if (!principal) return undefined;
  const accountId = principal.split(':')[4] as string;
  const resource = userArn.split(':').slice(5).join(':');
  const session = resource.startsWith('assumed-role/') ? resource.split('/')[2] : undefined;
  const callerId =
    session !== undefined
      ? `${uniqueId('AROA', principal)}:${session}`
      : resource === 'root'
        ? accountId
        : resource.startsWith('federated-user/')
          ? `${accountId}:${resource.slice('federated-user/'.length)}`
          : uniqueId('AIDA', principal);
  return {
    iam: {
      accessKey: uniqueId(session !== undefined ? 'ASIA' : 'AKIA', userArn),
      accountId,
      callerId,
      cognitoIdentity: null,
      // Typed as a string by @types/aws-lambda; API Gateway sends null outside an organisation.
      principalOrgId: null as unknown as string,
      userArn,
      userId: callerId,
    },
  };
}

/**
 * The caller a request names: none (no header), the authoriser context of the ARN it names, or
 * the reason it is refused (403, as API Gateway refuses a bad signature).
 */
export function namedCaller(
  values: readonly string[] | undefined,
): { readonly authorizer?: APIGatewayEventRequestContextIAMAuthorizer } | { readonly refused: string } {
  if (values === undefined) return {};
  const authorizer = values.length === 1 ? iamAuthorizer(values[0] as string) : undefined;
  if (authorizer) return { authorizer };
  return {
    refused: `${CALLER_HEADER} must be one IAM principal ARN (a role, user, assumed-role session or account root)`,
  };
}
