import type { IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { ProviderChannel, ProviderDescriptor } from '../../lambdas/contract/providers.ts';
import type { NoticeFunction } from '../constructs/notice-function.ts';
import type { BindingSettings } from './binding-settings.ts';

/**
 * A provider's CDK binding (docs/architecture.md §"Provider modules"): its deployment settings,
 * what it keeps in the stateful stack (its secret), and how each function that carries one of its
 * facets is granted and configured. The delivery stack asks the bindings of the providers the
 * deployment settings select or retain; an unselected provider leaves no trace (no secret, no
 * grant, no route, no rule).
 */
export interface ProviderBinding {
  readonly descriptor: ProviderDescriptor;
  /** Its deployment settings (deploy/settings.json keys): ./binding-settings.ts `providerSettings`. */
  readonly settings: BindingSettings;
  /** Stateful stack: what must outlive compute redeploys. */
  stateful?(scope: Construct, context: StatefulContext): ProviderResources;
  /** Delivery stack: shared resources of the provider, then a binder for the functions. */
  deliver(scope: Construct, context: DeliveryContext): DeployedProvider;
  /** Warnings the deployment check accepts (they describe the settings, not a defect). */
  readonly acceptedWarnings?: readonly string[];
  /**
   * A webhook provider's: the requests it posts per message it sends, at most (status callbacks,
   * events); its route's throttle, or the function URL's reserved concurrency, follows from it
   * (./webhook-throttle.ts).
   */
  readonly webhookEventsPerMessage?: number;
}

export type { BindingSettings };

/**
 * The part of the deployment configuration a binding reads. lib/config.ts's NoticeLedgerConfig
 * has it (the stacks pass theirs); it is declared here because lib/config.ts imports the
 * bindings' registry, and a binding importing lib/config.ts back would close an import circle.
 */
export interface BindingConfig {
  /** kebab-case stack prefix, for physical names. */
  readonly resourcePrefix: string;
  /** The parsed deployment settings, read through `bindingSettings`. */
  readonly settings: Readonly<Record<string, unknown>>;
}

export interface StatefulContext {
  readonly config: BindingConfig;
  /** The customer key of secrets at rest. */
  readonly secretsKey: IKey;
}

/** What a binding kept in the stateful stack, handed to its delivery part. */
export interface ProviderResources {
  /** The secret of its credentials (the descriptor's `secretVariable`). */
  readonly secret?: ISecret;
}

export interface DeliveryContext {
  readonly config: BindingConfig;
  readonly resources: ProviderResources;
  /**
   * The origin providers call back (PUBLIC_BASE_URL), for what a sender names per message
   * (a status callback URL): `publicBaseUrl` when set, else the provider-events function's URL
   * or the API's endpoint, whichever takes the webhooks (lib/providers/webhook-ingress.ts). The
   * provider-events function gets its own from the delivery stack.
   */
  readonly publicBaseUrl: string;
  /** Where events the provider-events function could not take end up (rule targets use it too). */
  readonly eventsDeadLetterQueue: IQueue;
}

/** A provider in this deployment: binds the functions that carry its facets. */
export interface DeployedProvider {
  /** The sender of `channel`: grants and settings of the transport. */
  bindTransport?(fn: NoticeFunction, channel: ProviderChannel): void;
  /** The reconciler: what the lookup and status facets need (ambiguous sends, delivery follow-up). */
  bindLookup?(fn: NoticeFunction): void;
  /**
   * The provider-events function: what the inbound facet needs; webhook providers get
   * `POST /v1/provider-events/<id>` from the delivery stack (the function's URL, or a route of
   * the API: lib/providers/webhook-ingress.ts), event providers route their events to the
   * function here.
   */
  bindInbound?(fn: NoticeFunction): void;
  /** Alarms the provider needs on the application's gauges (after the monitoring is built). */
  monitor?(monitoring: ProviderMonitoring): void;
}

/** What a binding may add to the monitoring: an alarm on one of the application's gauges. */
export interface ProviderMonitoring {
  readonly metrics: { readonly reconciliationLagSeconds: IMetric };
  alarmOnGauge(
    id: string,
    metric: IMetric,
    options: { readonly threshold: number; readonly evaluationPeriods: number; readonly description: string },
  ): void;
}

/** Reads this binding's settings out of the parsed deployment settings. */
export function bindingSettings<T>(config: BindingConfig, binding: Pick<ProviderBinding, 'settings'>): T {
  return Object.fromEntries(
    Object.keys(binding.settings.defaults).map((key) => [key, config.settings[key]]),
  ) as T;
}
