import type { EventBridgeEvent } from 'aws-lambda';
import type { CredentialGenerator } from '../local-secrets.ts';
import type { RunningService, StackContext } from '../service.ts';

/** A provider's part of the local stack: its simulator, and what the simulator cannot do itself. */
export interface LocalProvider {
  /** The provider module's id (lambdas/providers/<id>). */
  readonly id: string;
  /** Key in the banner and the state file (`sesv2`, `twilio`). */
  readonly service: string;
  /** Its line in the banner. */
  readonly label: string;
  /** True when the environment names a running service (its base URL or endpoint): start nothing. */
  external(env: NodeJS.ProcessEnv): boolean;
  /** The endpoint in use, started or external. */
  endpoint(env: NodeJS.ProcessEnv): string | undefined;
  /** Credentials that must survive restarts, kept in local-secrets.json under the id. */
  readonly credentials?: CredentialGenerator;
  /** Starts the simulator; its `env` completes the provider's settings for the functions. */
  start(
    context: StackContext,
    credentials: Readonly<Record<string, string>>,
  ): Promise<RunningService & { readonly simulator: unknown }>;
  /**
   * Delivers the provider's events the way AWS would (an EventBridge rule), for a simulator that
   * publishes none; started once the functions are up. `started`: this stack started the simulator.
   */
  feed?(
    context: StackContext & { readonly started: boolean },
    deliver: (event: EventBridgeEvent<string, unknown>) => Promise<unknown>,
  ): { stop(): void; readonly describe: string } | undefined;
}
