import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, type AppProps, type Environment, Validations } from 'aws-cdk-lib';
import { ConfigError } from '../lambdas/contract/config-error.ts';
import {
  loadSettings,
  type NoticeLedgerConfig,
  readConfig,
  SETTING_DEFAULTS,
  SETTINGS_FILE,
} from './config.ts';
import { REPO_ROOT } from './constructs/bundling.ts';
import { compliancePacks } from './nag.ts';
import { DeliveryStack } from './stacks/delivery-stack.ts';
import { StatefulStack } from './stacks/stateful-stack.ts';

export interface NoticeLedgerStacks {
  readonly config: NoticeLedgerConfig;
  readonly stateful: StatefulStack;
  readonly delivery: DeliveryStack;
}

export interface BuildOptions {
  readonly config: NoticeLedgerConfig;
  /**
   * Account and Region to deploy to.
   * @default - environment-agnostic (resolved by the CLI's credentials at deploy time)
   */
  readonly env?: Environment;
  /**
   * Register the cdk-nag packs as validation plugins, so that synthesis fails on any finding
   * that is not acknowledged (`cdk synth` prints the report and exits 1; an in-process
   * `app.synth()` throws it).
   * @default true
   */
  readonly compliance?: boolean;
}

/** The composition root: both stacks from one configuration. */
export function buildNoticeLedger(app: App, options: BuildOptions): NoticeLedgerStacks {
  const { config } = options;
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
    description: 'notice-ledger: functions, HTTP API, event sources, schedules, provider events, alarms',
    config,
    stateful,
  });
  if (options.compliance ?? true) Validations.of(app).addPlugins(...compliancePacks());
  return { config, stateful, delivery };
}

/** What the CDK CLI tells the app: `CDK_DEFAULT_ACCOUNT`, `CDK_DEFAULT_REGION`. */
export type CliEnvironment = Readonly<Record<string, string | undefined>>;

/**
 * Where the stacks go: the account and Region pinned in the settings, else the CLI's.
 *
 * The CLI computes both before it runs the app and overwrites whatever the caller exported:
 * CDK_DEFAULT_REGION is the first of AWS_REGION, AWS_DEFAULT_REGION, the profile's Region
 * (~/.aws/config), the EC2 metadata Region and `us-east-1`; CDK_DEFAULT_ACCOUNT is set only when
 * credentials resolve (otherwise an exported value passes through). So
 * `CDK_DEFAULT_REGION=eu-west-1 npx cdk synth` synthesizes for us-east-1 on a machine without an
 * AWS configuration; `AWS_REGION=eu-west-1` is what selects the Region. Without an account the
 * stacks stay environment-agnostic (the offline `npm run synth`), rather than bound to the CLI's
 * fallback Region.
 */
export function deploymentEnvironment(
  config: NoticeLedgerConfig,
  cli: CliEnvironment,
): Environment | undefined {
  if (config.target) return config.target;
  const account = cli.CDK_DEFAULT_ACCOUNT;
  const region = cli.CDK_DEFAULT_REGION;
  return account && region ? { account, region } : undefined;
}

/**
 * The context the CDK CLI gives the app from cdk.json (feature flags, CLI settings): in-process
 * builds pass it themselves so they synthesize what `cdk synth` synthesizes.
 */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  return cdkJson.context ?? {};
}

export interface NoticeLedgerAppOptions {
  /** The variables the CDK CLI passes to the app (bin/app.ts: `process.env`). */
  readonly cli?: CliEnvironment;
  /**
   * Settings instead of {@link SETTINGS_FILE} (tests).
   * @default - read from the file
   */
  readonly settings?: Readonly<Record<string, unknown>>;
  /** Context and output directory of the App (tests: `aws:cdk:bundling-stacks`, a temporary outdir). */
  readonly appProps?: AppProps;
  /** @default true */
  readonly compliance?: boolean;
}

/**
 * What bin/app.ts runs, and what the infrastructure tests and `npm run deploy:check` run with
 * other CLI environments: settings → configuration → environment → stacks (+ cdk-nag).
 */
export function createNoticeLedgerApp(
  options: NoticeLedgerAppOptions = {},
): NoticeLedgerStacks & { readonly app: App } {
  const app = new App(options.appProps);
  for (const key of Object.keys(SETTING_DEFAULTS)) {
    if (app.node.tryGetContext(key) !== undefined) {
      throw new ConfigError(
        `${key} was given as CDK context (-c ${key}=… or cdk.json "context"): deployment settings live in ` +
          `${SETTINGS_FILE} only, so that every later deploy uses the same values. Set it there and commit it.`,
      );
    }
  }
  const config = readConfig(options.settings ?? loadSettings(join(REPO_ROOT, SETTINGS_FILE)));
  const env = deploymentEnvironment(config, options.cli ?? {});
  return {
    app,
    ...buildNoticeLedger(app, {
      config,
      ...(env ? { env } : {}),
      ...(options.compliance === undefined ? {} : { compliance: options.compliance }),
    }),
  };
}
