import type { ProviderDescriptor } from '../contract/providers.ts';
import type { Channel } from '../domain/channel.ts';
import type { Clock } from './clock.port.ts';
import type { IntentRef } from './intent-queue.port.ts';
import type { ProviderLookup } from './provider-lookup.port.ts';
import type { EmailTransport, SmsTransport } from './transport.port.ts';

/**
 * A provider's later word about a message (status callback, webhook, EventBridge event, a
 * pulled event), verified and matched to an intent by its module. Carries codes, never
 * addresses or content.
 */
export interface DeliveryReport {
  readonly ref: IntentRef;
  /** The module that produced it (a row's `provider`). */
  readonly provider: string;
  /** The provider's id for the message (the receipt its send answered with). */
  readonly receiptId: string;
  readonly kind: 'accepted' | 'delivered' | 'failed';
  /** Why it failed, when it did: `hard_bounce`, `complaint`, `delivery_failed`. */
  readonly failure?: 'hard_bounce' | 'complaint' | 'delivery_failed' | undefined;
  /** The provider's own code (an error code, a bounce type and subtype). */
  readonly code?: string | undefined;
  /** Whether the destination should stop receiving this channel (hard bounce, complaint, opt-out). */
  readonly suppress?: boolean | undefined;
  /** When the provider says it happened (epoch ms). */
  readonly at: number;
  /**
   * The provider's id of the event (a webhook message id, an event id): a repeat of an id
   * already applied is dropped before it reaches the ledger.
   */
  readonly eventId?: string | undefined;
}

/** A middleware plugin an AWS SDK v3 client takes (`middlewareStack.use`; smithy's `Pluggable`). */
export interface AwsClientPlugin {
  applyToStack(stack: unknown): void;
}

/** An AWS SDK v3 client, as far as the function that builds one needs to know it. */
export interface AwsSdkClient {
  readonly middlewareStack: { use(plugin: AwsClientPlugin): void };
}

/** What a module needs to build a facet: its own settings, resolved, and the shared timing. */
export interface ProviderContext {
  /** Every setting the descriptor declares that has a value (env, secret or default). */
  readonly settings: Readonly<Record<string, string>>;
  /** `PROVIDER_TIMEOUT_MS`: one provider call; past it the outcome is ambiguous. */
  readonly timeoutMs: number;
  /**
   * `PUBLIC_BASE_URL` without a trailing slash: where this deployment's webhooks are (a sender
   * names it per message). The provider-events function behind its own URL has none: its
   * requests tell it (InboundRequest.url).
   */
  readonly publicBaseUrl: string | undefined;
  readonly clock: Clock;
  /**
   * Hands an AWS SDK client the module builds (a provider that is an AWS API) to the function that
   * runs it, which may add to it (the local stack's IAM check, local/iam/); the same client back.
   */
  readonly awsClient: <C extends AwsSdkClient>(client: C) => C;
}

export interface ChannelTransports {
  readonly email: EmailTransport;
  readonly sms: SmsTransport;
}

/** The transport facet: one factory per channel the module serves. */
export type TransportFacet = {
  readonly [C in Channel]?: (context: ProviderContext) => ChannelTransports[C];
};

/** The lookup facet: how the reconciler asks about an ambiguous attempt. */
export type LookupFacet = (context: ProviderContext) => ProviderLookup;

/** What the reconciler knows about an accepted row when it asks the provider for its status. */
export interface StatusQuery {
  readonly ref: IntentRef;
  /** The provider's id for the message (the receipt its send answered with). */
  readonly receiptId: string;
  /** When the row was accepted (epoch ms). */
  readonly acceptedAt: number;
}

export type StatusAnswer =
  /** What the provider says now, as delivery reports (none: nothing new, not final yet). */
  | { readonly kind: 'reports'; readonly reports: readonly DeliveryReport[] }
  /** It could not answer (timeout, 5xx, 429): asked again later; `code` names why. */
  | { readonly kind: 'unavailable'; readonly code: string };

/**
 * Asks a provider what became of an accepted message (delivery follow-up, docs/architecture.md
 * §3). The answer is applied like an inbound event, so a pulled report and a pushed one are the
 * same fact.
 */
export interface ProviderStatus {
  readonly provider: string;
  /**
   * Set by a provider whose events are only pulled: its rows are asked every this many ms from
   * acceptance on (instead of after DELIVERY_REPORT_GRACE_MS on a back-off).
   */
  readonly pollIntervalMs?: number | undefined;
  pull(query: StatusQuery): Promise<StatusAnswer>;
}

/** The status facet: the reconciler's follow-up question about an accepted message. */
export type StatusFacet = (context: ProviderContext) => ProviderStatus;

/** A field of an inbound request that made it unusable (400); names, never values. */
export interface InboundViolation {
  readonly path: string;
  readonly code: string;
  readonly message: string;
}

/** What an inbound request or event amounted to, before the ledger sees it. */
export type InboundVerdict =
  /** Signature missing or wrong: nothing may change (401 no credentials presented, 403 wrong ones). */
  | { readonly kind: 'refused'; readonly status: 401 | 403; readonly detail: string }
  /** Verified, but not something we can read (400). */
  | { readonly kind: 'malformed'; readonly errors: readonly InboundViolation[] }
  /**
   * Verified and read: the reports to apply; `unmatched` counts events naming no intent of ours
   * (a Messaging-Service-level callback, another application's mail), `ignored` events that say
   * nothing we record (opens, delays).
   */
  | {
      readonly kind: 'accepted';
      readonly reports: readonly DeliveryReport[];
      readonly unmatched: number;
      readonly ignored: readonly string[];
    };

/** A signed HTTP request at `POST /v1/provider-events/<id>`, as the provider sent it. */
export interface InboundRequest {
  /**
   * The URL the provider called: its origin (PUBLIC_BASE_URL, or the function URL the request
   * arrived at) + path + query (what signatures cover).
   */
  readonly url: string;
  readonly header: (name: string) => string | undefined;
  /** Raw body, checked to be UTF-8 text. */
  readonly body: string;
  readonly contentType: string | undefined;
}

/** An EventBridge event (`source`, `detail-type`, `detail`), as the rule delivered it. */
export interface InboundEvent {
  readonly source: string;
  readonly detailType: string;
  readonly time: string | undefined;
  readonly detail: unknown;
}

/** The inbound facet: how the provider's later word reaches the ledger. */
export type InboundFacet =
  | {
      readonly kind: 'webhook';
      /** The media type it is sent as; anything else is answered 415 before the module sees it. */
      readonly contentType: 'application/x-www-form-urlencoded' | 'application/json';
      readonly create: (context: ProviderContext) => (request: InboundRequest) => InboundVerdict;
    }
  | {
      readonly kind: 'eventbridge';
      /** EventBridge `source` values this module reads (the CDK rule and the handler's dispatch). */
      readonly sources: readonly string[];
      readonly create: (context: ProviderContext) => (event: InboundEvent) => InboundVerdict;
    };

/**
 * A provider module: its descriptor and its facets (each behind a function, so a facet's settings
 * are resolved only when a function uses it). `undefined` facets are either
 * not offered or left out of this bundle (lambdas/providers/registry.ts explains the switches).
 */
export interface ProviderModule {
  readonly descriptor: ProviderDescriptor;
  readonly transport?: (() => Promise<TransportFacet>) | undefined;
  readonly lookup?: (() => Promise<LookupFacet>) | undefined;
  readonly status?: (() => Promise<StatusFacet>) | undefined;
  readonly inbound?: (() => Promise<InboundFacet>) | undefined;
}
