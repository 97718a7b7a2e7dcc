import { ArnFormat, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { AccessLogField, AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  type CfnStage,
  HttpApi,
  type HttpMethod,
  HttpNoneAuthorizer,
  type HttpRoute,
  HttpStage,
  LogGroupLogDestination,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpIamAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { ManagedPolicy, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import {
  CALLER_ROLES,
  type CallerRole,
  type HttpMethod as ContractMethod,
  deployedPaths,
  ROUTES,
  type RouteFunction,
  type RouteSpec,
  routeKey,
} from '../../lambdas/contract/routes.ts';
import { acknowledge, acknowledgeWildcardResources } from '../nag.ts';

export interface IntakeApiProps {
  /** The function behind each route function of the contract (each routes on method and path itself). */
  readonly handlers: Readonly<Record<RouteFunction, IFunction>>;
  /** Providers with an inbound webhook in this deployment: one `POST /v1/provider-events/<id>` each. */
  readonly webhookProviders: readonly string[];
  /** Default stage throttle. */
  readonly throttle: { readonly rateLimit: number; readonly burstLimit: number };
  /**
   * Each unauthenticated provider webhook route's own throttle, by provider id: what the provider
   * posts at the configured send rates (lib/providers/webhook-throttle.ts).
   */
  readonly callbackThrottles: Readonly<
    Record<string, { readonly rateLimit: number; readonly burstLimit: number }>
  >;
  readonly logRetention: RetentionDays;
  readonly logEncryptionKey: IKey;
  /** Start of the caller policies' names (`notice-ledger` → `notice-ledger-operator-eu-west-1`). */
  readonly policyNamePrefix: string;
}

/**
 * The routes of lambdas/contract/routes.ts, as this deployment serves them: every operator and
 * business route requires IAM (SigV4): callers are AWS principals with `execute-api:Invoke` on the
 * routes they need. Health is IAM too: an open route would let anyone on the internet invoke the
 * function (cost, noise) to learn nothing a monitoring role could not learn signed. A provider's
 * webhook is open because providers cannot sign with SigV4; its module verifies the provider's own
 * signature and answers 401/403 otherwise. One webhook route per provider that has one (an unknown
 * provider is API Gateway's 404), each throttled apart.
 */
export function deployedRoutes(
  webhookProviders: readonly string[],
): { readonly path: string; readonly methods: HttpMethod[]; readonly route: RouteSpec }[] {
  return ROUTES.flatMap((route) =>
    deployedPaths(route, webhookProviders).map((path) => ({
      path,
      methods: route.methods.map((m) => m as HttpMethod),
      route,
    })),
  );
}

/** `/v1/notices/{noticeId}` → `/v1/notices/*`: IAM matches request paths, not route templates. */
function wildcardParameters(path: string): string {
  return path.replace(/\{[^}]+\}/g, '*');
}

/**
 * API Gateway HTTP API in front of the http and provider-events functions: explicit routes (anything else is a 404
 * from API Gateway, never reaching the function), IAM authorization, a `$default` stage with
 * throttling and JSON access logs.
 *
 * Access logs record the route template, never the raw path: suppression paths carry a
 * destination (docs/architecture.md §5: no raw addresses in logs).
 */
export class IntakeApi extends Construct {
  readonly api: HttpApi;
  readonly stage: HttpStage;
  readonly accessLogs: LogGroup;
  /** Attach to business systems: submit notices, read and cancel their own. */
  readonly submitterPolicy: ManagedPolicy;
  /** Attach to operators: everything signed (notices, timelines, suppressions, health). */
  readonly operatorPolicy: ManagedPolicy;
  /** Attach to auditors: every read (timelines, the list, suppressions, health), no act. */
  readonly auditorPolicy: ManagedPolicy;
  /** The policies' names (permission sets reference customer-managed policies by name). */
  readonly policyNames: Readonly<Record<CallerRole, string>>;

  constructor(scope: Construct, id: string, props: IntakeApiProps) {
    super(scope, id);
    this.api = new HttpApi(this, 'Api', {
      description: 'notice-ledger: notices, timelines, suppressions, provider callbacks',
      createDefaultStage: false,
    });
    this.accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: props.logRetention,
      encryptionKey: props.logEncryptionKey,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      autoDeploy: true,
      throttle: props.throttle,
      accessLogSettings: {
        destination: new LogGroupLogDestination(this.accessLogs),
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: AccessLogField.contextRequestId(),
            requestTime: AccessLogField.contextRequestTime(),
            routeKey: AccessLogField.contextRouteKey(),
            status: AccessLogField.contextStatus(),
            protocol: AccessLogField.contextProtocol(),
            responseLength: AccessLogField.contextResponseLength(),
            responseLatency: AccessLogField.contextResponseLatency(),
            integrationLatency: AccessLogField.contextIntegrationLatency(),
            sourceIp: AccessLogField.contextIdentitySourceIp(),
            // Who asked: the signing principal (audit trail of operator actions).
            caller: AccessLogField.contextIdentityUserArn(),
            error: AccessLogField.contextErrorMessage(),
            integrationError: AccessLogField.contextIntegrationErrorMessage(),
          }),
        ),
      },
    });
    const policyName = (role: string) => `${props.policyNamePrefix}-${role}-${Stack.of(this).region}`;
    this.policyNames = Object.fromEntries(CALLER_ROLES.map((role) => [role, policyName(role)])) as Record<
      CallerRole,
      string
    >;
    // One policy per role, each from the routes' `roles` column (lambdas/contract/routes.ts), the
    // same column the http function checks every caller's role against.
    const policy = (role: CallerRole, id: string, description: string) =>
      this.invokePolicy(
        id,
        this.policyNames[role],
        description,
        ROUTES.filter((r) => r.auth === 'iam' && r.roles.includes(role)).flatMap((r) =>
          r.methods.map((m) => [m as HttpMethod, r.path] as [HttpMethod, string]),
        ),
      );
    this.submitterPolicy = policy(
      'submitter',
      'SubmitterPolicy',
      'notice-ledger: submit notices, read and cancel those the caller submitted',
    );
    this.operatorPolicy = policy(
      'operator',
      'OperatorPolicy',
      'notice-ledger: every IAM route (notices, timelines, suppressions, health)',
    );
    this.auditorPolicy = policy(
      'auditor',
      'AuditorPolicy',
      'notice-ledger: read every notice, the list and suppressions; no act',
    );

    // One integration per function: the http function never sees a provider's request.
    const integrations = {
      http: new HttpLambdaIntegration('Http', props.handlers.http),
      providerEvents: new HttpLambdaIntegration('ProviderEvents', props.handlers.providerEvents),
    } satisfies Record<RouteFunction, HttpLambdaIntegration>;
    const iam = new HttpIamAuthorizer();
    const none = new HttpNoneAuthorizer();
    const routesByKey = new Map<string, HttpRoute>();
    const webhookSettings: Record<string, Record<string, number>> = {};
    for (const { path, methods, route } of deployedRoutes(props.webhookProviders)) {
      const routes = this.api.addRoutes({
        path,
        methods,
        integration: integrations[route.function],
        authorizer: route.auth === 'iam' ? iam : none,
      });
      for (const [i, method] of methods.entries()) {
        routesByKey.set(routeKey(method as ContractMethod, path), routes[i] as HttpRoute);
      }
      if (route.auth === 'provider') {
        // `/v1/provider-events/<id>`: the provider whose reports the route takes.
        const provider = path.slice(path.lastIndexOf('/') + 1);
        const throttle = props.callbackThrottles[provider];
        if (!throttle) throw new Error(`no webhook throttle for provider ${provider}`);
        for (const [i, r] of routes.entries()) {
          webhookSettings[routeKey(methods[i] as ContractMethod, path)] = {
            ThrottlingRateLimit: throttle.rateLimit,
            ThrottlingBurstLimit: throttle.burstLimit,
          };
          acknowledge(r, {
            rule: 'AwsSolutions-APIG4',
            reason:
              'Provider webhooks cannot carry SigV4; the provider module verifies the provider signature (an ' +
              'HMAC or public-key signature over the request with its credentials) and answers 401/403 otherwise; ' +
              'the route is throttled apart.',
          });
        }
      }
    }
    this.routeKeys = [...routesByKey.keys()];
    if (Object.keys(webhookSettings).length > 0) this.setRouteSettings(routesByKey, webhookSettings);
  }

  /** Every route key the API serves (`POST /v1/notices`, `POST /v1/provider-events/<id>` …). */
  readonly routeKeys: readonly string[];

  /**
   * Per-route settings of the stage, each waiting for its route. The L2 stage has no per-route
   * settings, so they go through the L1; RouteSettings is an untyped map in CloudFormation, keyed
   * by route key as CloudFormation spells it. Nothing else orders the stage after the routes (it
   * references only the API and the log group), and API Gateway rejects a stage whose settings
   * name a route that does not exist yet ("Unable to find Route by key …", CREATE_FAILED).
   */
  private setRouteSettings(
    routesByKey: ReadonlyMap<string, HttpRoute>,
    settings: Readonly<Record<string, Readonly<Record<string, number>>>>,
  ): void {
    for (const key of Object.keys(settings)) {
      const route = routesByKey.get(key);
      if (!route) throw new Error(`route settings name ${key}, which is not a route of the API`);
      this.stage.node.addDependency(route);
    }
    (this.stage.node.defaultChild as CfnStage).routeSettings = settings;
  }

  /** `execute-api:Invoke` ARN of a route on the `$default` stage (path parameters as `*`). */
  routeArn(method: HttpMethod, path: string): string {
    return Stack.of(this).formatArn({
      service: 'execute-api',
      resource: this.api.apiId,
      resourceName: `$default/${method}${wildcardParameters(path)}`,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
  }

  /**
   * A caller policy with a fixed name, `<prefix>-<role>-<region>`: IAM Identity Center permission
   * sets reference customer-managed policies by name (docs/deploy.md), and IAM names are global to
   * the account, so the Region keeps deployments in two Regions apart.
   */
  private invokePolicy(
    id: string,
    name: string,
    description: string,
    routes: readonly [HttpMethod, string][],
  ): ManagedPolicy {
    const arns = routes.map(([method, path]) => this.routeArn(method, path));
    const policy = new ManagedPolicy(this, id, {
      managedPolicyName: name,
      description,
      statements: [new PolicyStatement({ actions: ['execute-api:Invoke'], resources: arns })],
    });
    acknowledgeWildcardResources(
      policy,
      arns.filter((arn) => arn.includes('*')),
      'The route has path parameters (notice id, channel, destination) and IAM authorises the concrete ' +
        'request path, so the parameter segments must be wildcards; method and route prefix stay fixed.',
    );
    return policy;
  }

  /** The `$default` stage URL without a trailing slash: the PUBLIC_BASE_URL providers call. */
  get endpoint(): string {
    return this.api.apiEndpoint;
  }
}
