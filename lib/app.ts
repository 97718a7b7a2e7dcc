import { type App, type Environment, Validations } from 'aws-cdk-lib';
import { type NoticeLedgerConfig, readConfig } from './config.ts';
import { compliancePacks } from './nag.ts';
import { DeliveryStack } from './stacks/delivery-stack.ts';
import { StatefulStack } from './stacks/stateful-stack.ts';

export interface NoticeLedgerStacks {
  readonly config: NoticeLedgerConfig;
  readonly stateful: StatefulStack;
  readonly delivery: DeliveryStack;
}

export interface BuildOptions {
  /**
   * Account and Region to deploy to.
   * @default - environment-agnostic (resolved by the CLI's credentials at deploy time)
   */
  readonly env?: Environment;
  /**
   * Register the cdk-nag packs as validation plugins, so `cdk synth` fails on any finding that
   * is not acknowledged. Tests run the packs directly instead (`validateScope`).
   * @default true
   */
  readonly compliance?: boolean;
}

/** The composition root shared by `bin/app.ts` and the infrastructure tests. */
export function buildNoticeLedger(app: App, options: BuildOptions = {}): NoticeLedgerStacks {
  const config = readConfig((key) => app.node.tryGetContext(key));
  const env = options.env ? { env: options.env } : {};
  const stateful = new StatefulStack(app, `${config.stackPrefix}Stateful`, {
    ...env,
    stackName: `${config.stackPrefix}-Stateful`,
    description: 'notice-ledger: ledger table, keys, channel queues, retry schedules, secrets (retained)',
    config,
  });
  const delivery = new DeliveryStack(app, `${config.stackPrefix}Delivery`, {
    ...env,
    stackName: `${config.stackPrefix}-Delivery`,
    description: 'notice-ledger: functions, HTTP API, event sources, schedules, SES events, alarms',
    config,
    stateful,
  });
  if (options.compliance ?? true) Validations.of(app).addPlugins(...compliancePacks());
  return { config, stateful, delivery };
}
