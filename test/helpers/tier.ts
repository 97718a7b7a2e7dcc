import { inject } from 'vitest';
import type { TestTier } from '../tiers.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    testTier: TestTier;
  }
}

/**
 * Refuses a service in the fast tier (test/tiers.ts), so a test that needs one fails at once with
 * the reason instead of reaching for an endpoint nobody started (DynamoDB Local's would be AWS's).
 */
export function requireIntegrationTier(service: string): void {
  if (inject('testTier') === 'fast') {
    throw new Error(
      `${service} is not available in the fast tier (npm run test:fast): a test that needs it ` +
        'belongs to the integration tier; see test/tiers.ts',
    );
  }
}
