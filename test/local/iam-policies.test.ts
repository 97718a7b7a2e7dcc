/**
 * local/iam/role-policies.json is what the CDK app synthesizes now (as docs/openapi.json is what
 * the schemas say): a grant changed in lib/ without `npm run iam:policies` fails here, so the local
 * stack never enforces yesterday's policies.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FUNCTION_NAMES } from '../../lambdas/contract/functions.ts';
import { ROLE_POLICIES_FILE } from '../../local/iam/enforce.ts';
import { providerVariants, rolePoliciesJson, synthesizeRolePolicies } from '../../local/iam/synthesize.ts';
import { requireIntegrationTier } from '../helpers/tier.ts';

const ROOT = join(import.meta.dirname, '..', '..');

describe(ROLE_POLICIES_FILE, () => {
  it('is what the CDK app synthesizes for every role (run `npm run iam:policies` when this fails)', () => {
    // Prepare: one synthesis per provider variant (no bundling, no cdk-nag), seconds each.
    requireIntegrationTier('The CDK app');
    const started = performance.now();

    // Act
    const generated = rolePoliciesJson(synthesizeRolePolicies());

    // Assess
    console.info(
      `role policies: ${providerVariants().length} syntheses in ${Math.round(performance.now() - started)} ms`,
    );
    expect(readFileSync(join(ROOT, ROLE_POLICIES_FILE), 'utf8')).toBe(generated);
  }, 180_000);

  it('has every provider’s sender and the functions that carry no provider choice', () => {
    const { roles } = JSON.parse(readFileSync(join(ROOT, ROLE_POLICIES_FILE), 'utf8')) as {
      roles: Record<string, unknown>;
    };
    const senders = providerVariants().flatMap((v) => [`sendEmail@${v.email}`, `sendSms@${v.sms}`]);
    expect(Object.keys(roles).sort()).toEqual(
      [
        ...new Set([
          ...senders,
          ...FUNCTION_NAMES.filter((fn) => fn !== 'sendEmail' && fn !== 'sendSms'),
          'retryScheduler',
        ]),
      ].sort(),
    );
  });
});
