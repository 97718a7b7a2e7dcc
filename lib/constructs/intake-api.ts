import { ArnFormat, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { AccessLogField, AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  type CfnApi,
  type CfnStage,
  HttpApi,
  HttpMethod,
  HttpNoneAuthorizer,
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
import { acknowledge } from '../nag.ts';

export interface IntakeApiProps {
  /** The one function behind every route (it routes on method and path itself). */
  readonly handler: IFunction;
  /** Default stage throttle. */
  readonly throttle: { readonly rateLimit: number; readonly burstLimit: number };
  /** Tighter throttle of the unauthenticated provider callback route. */
  readonly callbackThrottle: { readonly rateLimit: number; readonly burstLimit: number };
  readonly logRetention: RetentionDays;
  readonly logEncryptionKey: IKey;
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
    // The L2 stage has no per-route settings: throttle the open route harder through the L1.
    // RouteSettings is an untyped map in CloudFormation, so its keys are written as CFN spells them.
    (this.stage.node.defaultChild as CfnStage).routeSettings = {
      [TWILIO_CALLBACK_ROUTE_KEY]: {
        ThrottlingRateLimit: props.callbackThrottle.rateLimit,
        ThrottlingBurstLimit: props.callbackThrottle.burstLimit,
      },
    };

    this.submitterPolicy = this.invokePolicy(
      'SubmitterPolicy',
      'notice-ledger: submit notices and read timelines',
      [
        [HttpMethod.POST, '/v1/notices'],
        [HttpMethod.POST, '/v1/notices/batch'],
        [HttpMethod.GET, '/v1/notices/{noticeId}'],
      ],
    );
    this.operatorPolicy = this.invokePolicy(
      'OperatorPolicy',
      'notice-ledger: every IAM route (notices, timelines, suppressions, health)',
      ROUTES.filter((r) => r.iam).flatMap((r) => r.methods.map((m) => [m, r.path] as [HttpMethod, string])),
    );

    const integration = new HttpLambdaIntegration('Http', props.handler);
    const iam = new HttpIamAuthorizer();
    const none = new HttpNoneAuthorizer();
    for (const route of ROUTES) {
      const routes = this.api.addRoutes({
        path: route.path,
        methods: [...route.methods],
        integration,
        authorizer: route.iam ? iam : none,
      });
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

  private invokePolicy(
    id: string,
    description: string,
    routes: readonly [HttpMethod, string][],
  ): ManagedPolicy {
    const policy = new ManagedPolicy(this, id, {
      description,
      statements: [
        new PolicyStatement({
          actions: ['execute-api:Invoke'],
          resources: routes.map(([method, path]) => this.routeArn(method, path)),
        }),
      ],
    });
    // cdk-nag names each wildcard resource as rendered: `<ApiLogicalId>` stands for the API id.
    const apiId = `<${Stack.of(this).getLogicalId(this.api.node.defaultChild as CfnApi)}>`;
    const wildcards = routes.filter(([, path]) => path.includes('{'));
    acknowledge(
      policy,
      ...wildcards.map(([method, path]) => ({
        rule:
          'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:' +
          `${apiId}/$default/${method}${wildcardParameters(path)}]`,
        reason:
          'The route has path parameters (notice id, channel, destination) and IAM authorises the concrete ' +
          'request path, so the parameter segments must be wildcards; method and route prefix stay fixed.',
      })),
    );
    return policy;
  }

  /** The `$default` stage URL without a trailing slash: the PUBLIC_BASE_URL providers call. */
  get endpoint(): string {
    return this.api.apiEndpoint;
  }
}
