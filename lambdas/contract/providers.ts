/**
 * What a provider module declares about itself, as plain data: its id, channels, settings and
 * secret, how its later word arrives, and what it can do. Runtime (lambdas/providers/registry.ts),
 * CDK bindings (lib/providers/) and the local stack (local/providers/) read the same descriptor,
 * so a provider's variable names and capabilities are written once, in
 * lambdas/providers/<id>/descriptor.ts. docs/architecture.md §"Provider modules" is the contract.
 */

export type ProviderChannel = 'email' | 'sms';

/**
 * The parts of a provider module a function can be built with. Each function carries only the
 * facets it uses (the sender: transport; the reconciler: lookup and status; provider events:
 * inbound).
 */
export type ProviderFacet = 'transport' | 'lookup' | 'status' | 'inbound';

export const PROVIDER_FACETS: readonly ProviderFacet[] = ['transport', 'lookup', 'status', 'inbound'];

export interface ProviderSettingSpec {
  /** The environment variable. */
  readonly name: string;
  readonly description: string;
  readonly default?: string;
  /** Facets that cannot work without it: when missing, the start fails naming the variable. */
  readonly requiredBy?: readonly ProviderFacet[];
  /**
   * A credential. In AWS it comes from the provider's secret (this field of the JSON named by
   * `secretVariable`), which wins over the plain variable; locally the plain variable is used.
   */
  readonly secretField?: string;
  /** Must parse as a URL (an API origin). */
  readonly url?: boolean;
}

export type InboundKind =
  /** Signed HTTP requests at `POST /v1/provider-events/<id>`, verified by the module. */
  | 'webhook'
  /** Events on the default EventBridge bus (the CDK binding adds the rule). */
  | 'eventbridge'
  /** Nothing is pushed: the reconciler pulls events for the rows that await them. */
  | 'poll'
  | 'none';

export interface ProviderCapabilities {
  /** Sends the ledger's idempotency key; a replay under it is answered, not sent again. */
  readonly idempotencyKey: boolean;
  /** Can look an ambiguous attempt up (by receipt, correlation or listing). */
  readonly lookup: boolean;
  /** Can report the status of an accepted message on request (delivery follow-up: its `status` facet). */
  readonly statusPull: boolean;
  /** Takes many messages in one call with one result per message. */
  readonly batchSend: boolean;
  /**
   * Keeps a suppression or opt-out list of its own: the transport's `suppressions` check it before
   * the claim and/or mirror our suppressions into it.
   */
  readonly suppressionSync: boolean;
  /**
   * Some answers mean our account needs a person (a spend limit, credit, a revoked key): the
   * transport returns `operator_action_required` for them.
   */
  readonly operatorActions?: boolean;
}

/** A webhook as the API document describes it (`POST /v1/provider-events/<id>`). */
export interface ProviderWebhook {
  /** One line for the API document. */
  readonly summary: string;
  readonly contentType: 'application/x-www-form-urlencoded' | 'application/json';
  /** The header carrying the provider's signature. */
  readonly signatureHeader: string;
  /** The answer to a request that does not verify. */
  readonly refusedStatus: 401 | 403;
}

export interface ProviderDescriptor {
  /** The value of EMAIL_PROVIDER / SMS_PROVIDER, the path segment of its webhook, a row's `provider`. */
  readonly id: string;
  readonly title: string;
  readonly channels: readonly ProviderChannel[];
  /** Channels it serves when their <CHANNEL>_PROVIDER is unset (one provider per channel). */
  readonly defaultFor?: readonly ProviderChannel[];
  readonly settings: readonly ProviderSettingSpec[];
  /** AWS: the variable naming the Secrets Manager secret that holds the `secretField`s. */
  readonly secretVariable?: string;
  readonly inbound: InboundKind;
  /** With `inbound: 'webhook'`: what the request looks like. */
  readonly webhook?: ProviderWebhook;
  readonly capabilities: ProviderCapabilities;
}
