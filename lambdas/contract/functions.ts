/**
 * The functions a deployment runs, written once (plain data): what each is built from (its
 * handler under lambdas/handlers/), which provider facets it carries and for which providers.
 * The CDK bundles each from its own entry with only those (lib/constructs/bundling.ts), the
 * local stack runs the same handlers, and test/infra/bundles.test.ts checks the bundles.
 */
import type { ProviderFacet } from './providers.ts';

export interface FunctionSpec {
  /** Handler file under lambdas/handlers/ exporting `handler`. */
  readonly handler: string;
  /** The provider facets its bundle carries. */
  readonly facets: readonly ProviderFacet[];
  /**
   * Whose facets: `email` / `sms` the channel's selected provider; `answering` every provider
   * rows may still answer to (selected and retained); `none` no provider code at all.
   */
  readonly providers: 'none' | 'email' | 'sms' | 'answering';
}

export const FUNCTIONS = {
  /** Intake, timelines, operator suppressions, health. */
  http: { handler: 'http-api.ts', facets: [], providers: 'none' },
  sendEmail: { handler: 'send-email.ts', facets: ['transport'], providers: 'email' },
  sendSms: { handler: 'send-sms.ts', facets: ['transport'], providers: 'sms' },
  /** Leases, lookups of unknown outcomes, delivery follow-up (status), deadlines, gauges. */
  reconciler: { handler: 'reconciler.ts', facets: ['lookup', 'status'], providers: 'answering' },
  /** Webhooks at POST /v1/provider-events/{provider} and EventBridge provider events. */
  providerEvents: { handler: 'provider-events.ts', facets: ['inbound'], providers: 'answering' },
  /** The ledger table's change stream → outcome events on the bus and the webhook queue (issue 23). */
  outcomeStream: { handler: 'outcome-stream.ts', facets: [], providers: 'none' },
  /** The watch queue → rows still owed something put into the open index (docs/table-design.md). */
  watch: { handler: 'watch.ts', facets: [], providers: 'none' },
  /** The webhook queue → signed Standard Webhooks to OUTCOME_WEBHOOK_URL, retried, dead-lettered. */
  outcomeWebhooks: { handler: 'outcome-webhooks.ts', facets: [], providers: 'none' },
  /** The ledger table's change stream → the write-once archive and the key records (issue 22, docs/archive.md). */
  archiver: { handler: 'archiver.ts', facets: [], providers: 'none' },
} as const satisfies Readonly<Record<string, FunctionSpec>>;

export type FunctionName = keyof typeof FUNCTIONS;

export const FUNCTION_NAMES = Object.keys(FUNCTIONS) as FunctionName[];
