import { ArnFormat, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { AccessLogField, AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  type CfnStage,
  HttpApi,
  HttpMethod,
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
import { acknowledge, acknowledgeWildcardResources } from '../nag.ts';

export interface IntakeApiProps {
  /** The one function behind every route (it routes on method and path itself). */
  readonly handler: IFunction;
  /** Default stage throttle. */
  readonly throttle: { readonly rateLimit: number; readonly burstLimit: number };
  /** Tighter throttle of the unauthenticated provider callback route. */
  readonly callbackThrottle: { readonly rateLimit: number; readonly burstLimit: number };
  readonly logRetention: RetentionDays;
  readonly logEncryptionKey: IKey;
  /** Start of the caller policies' names (`notice-ledger` → `notice-ledger-operator-eu-west-1`). */
  readonly policyNamePrefix: string;
}

/** `true` → SigV4 (IAM) required; `false` → open, the handler authenticates the caller itself. */
interface RouteSpec {
  readonly path: string;
  readonly methods: readonly HttpMethod[];
  readonly iam: boolean;
}

/**
 * The contract of DESIGN §6. Every operator and business route requires IAM (SigV4): callers are
 * AWS principals with `execute-api:Invoke` on the routes they need. Health is IAM too: an open
 * route would let anyone on the internet invoke the function (cost, noise) to learn nothing a
 * monitoring role could not learn signed. The Twilio callback is open because Twilio cannot sign
 * with SigV4; the handler verifies `X-Twilio-Signature` and answers 403 otherwise.
 */
export const ROUTES: readonly RouteSpec[] = [
  { path: '/v1/notices', methods: [HttpMethod.POST], iam: true },
  { path: '/v1/notices/batch', methods: [HttpMethod.POST], iam: true },
  { path: '/v1/notices/{noticeId}', methods: [HttpMethod.GET], iam: true },
  {
    path: '/v1/suppressions/{channel}/{destination}',
    methods: [HttpMethod.GET, HttpMethod.PUT, HttpMethod.DELETE],
    iam: true,
  },
  { path: '/v1/health', methods: [HttpMethod.GET], iam: true },
  { path: '/v1/provider-events/twilio', methods: [HttpMethod.POST], iam: false },
];

export const TWILIO_CALLBACK_ROUTE_KEY = 'POST /v1/provider-events/twilio';

/** `/v1/notices/{noticeId}` → `/v1/notices/*`: IAM matches request paths, not route templates. */
function wildcardParameters(path: string): string {
  return path.replace(/\{[^}]+\}/g, '*');
}

/**
 * API Gateway HTTP API in front of the http function: explicit routes (anything else is a 404
 * from API Gateway, never reaching the function), IAM authorization, a `$default` stage with
 * throttling and JSON access logs.
 *
 * Access logs record the route template, never the raw path: suppression paths carry a
 * destination (DESIGN §5: no raw addresses in logs).
 */
export class IntakeApi extends Construct {
  readonly api: HttpApi;
  readonly stage: HttpStage;
  readonly accessLogs: LogGroup;
  /** Attach to business systems: submit notices and read their timelines. */
  readonly submitterPolicy: ManagedPolicy;
  /** Attach to operators: everything signed (notices, timelines, suppressions, health). */
  readonly operatorPolicy: ManagedPolicy;
  /** The policies' names (permission sets reference customer-managed policies by name). */
  readonly policyNames: { readonly submitter: string; readonly operator: string };

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
    this.policyNames = { submitter: policyName('submitter'), operator: policyName('operator') };
    this.submitterPolicy = this.invokePolicy(
      'SubmitterPolicy',
      this.policyNames.submitter,
      'notice-ledger: submit notices and read timelines',
      [
        [HttpMethod.POST, '/v1/notices'],
        [HttpMethod.POST, '/v1/notices/batch'],
        [HttpMethod.GET, '/v1/notices/{noticeId}'],
      ],
    );
    this.operatorPolicy = this.invokePolicy(
      'OperatorPolicy',
      this.policyNames.operator,
      'notice-ledger: every IAM route (notices, timelines, suppressions, health)',
      ROUTES.filter((r) => r.iam).flatMap((r) => r.methods.map((m) => [m, r.path] as [HttpMethod, string])),
    );

    const integration = new HttpLambdaIntegration('Http', props.handler);
    const iam = new HttpIamAuthorizer();
    const none = new HttpNoneAuthorizer();
    const routesByKey = new Map<string, HttpRoute>();
    for (const route of ROUTES) {
      const routes = this.api.addRoutes({
        path: route.path,
        methods: [...route.methods],
        integration,
        authorizer: route.iam ? iam : none,
      });
      for (const [i, method] of route.methods.entries()) {
        routesByKey.set(`${method} ${route.path}`, routes[i] as HttpRoute);
      }
      if (!route.iam) {
        for (const r of routes) {
          acknowledge(r, {
            rule: 'AwsSolutions-APIG4',
            reason:
              'Twilio status callbacks cannot carry SigV4; the handler verifies X-Twilio-Signature (HMAC over ' +
              'the URL and parameters with the auth token) and answers 403 otherwise; the route is throttled apart.',
          });
        }
      }
    }

    this.setRouteSettings(routesByKey, {
      [TWILIO_CALLBACK_ROUTE_KEY]: {
        ThrottlingRateLimit: props.callbackThrottle.rateLimit,
        ThrottlingBurstLimit: props.callbackThrottle.burstLimit,
      },
    });
  }

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
