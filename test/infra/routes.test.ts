/**
 * Routes are written once (lambdas/contract/routes.ts): a route the routers serve is in the CDK
 * API, with the right function behind it, and the API has no route the routers do not serve. A
 * route missing from the CDK API (works locally, 404 in AWS) is then a failing test.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { findRoute, type HttpMethod, ROUTES, routeKey } from '../../lambdas/contract/routes.ts';
import { openApiDocument } from '../../lambdas/handlers/http/openapi.ts';
import { bindRoutes, HTTP_ENDPOINTS } from '../../lambdas/handlers/http/router.ts';
import { PROVIDERS } from '../../lambdas/providers/registry.ts';
import { deployedRoutes } from '../../lib/constructs/intake-api.ts';
import { CONSOLE_ROUTES, isConsolePath } from '../../local/console.ts';
import { logicalId, type Synthesized, synthesize, synthesizeIn } from './synth.ts';

let synth: Synthesized;
/** route key → logical id of the function its integration invokes. */
let deployed: Map<string, string>;

beforeAll(() => {
  synth = synthesize({ bundle: false });
  const template = synth.deliveryTemplate.toJSON().Resources as Record<
    string,
    { Type: string; Properties: Record<string, unknown> }
  >;
  deployed = new Map();
  for (const resource of Object.values(template)) {
    if (resource.Type !== 'AWS::ApiGatewayV2::Route') continue;
    const target = JSON.stringify(resource.Properties.Target);
    const integrationId = /"(\w+)"\]\]/.exec(target)?.[1] ?? /\{"Ref":"(\w+)"\}/.exec(target)?.[1];
    const integration = integrationId ? template[integrationId] : undefined;
    const uri = JSON.stringify(integration?.Properties.IntegrationUri);
    const fn = /"Fn::GetAtt":\["(\w+)","Arn"\]/.exec(uri)?.[1] ?? 'unknown';
    deployed.set(resource.Properties.RouteKey as string, fn);
  }
});

const functionIds = () => ({
  http: logicalId(synth.delivery.functions.http.function),
  providerEvents: logicalId(synth.delivery.functions.providerEvents.function),
});

describe('routes: one table for the routers, the CDK API and the local gateway', () => {
  it('the http function serves exactly the contract’s http routes', () => {
    const contract = ROUTES.filter((r) => r.function === 'http').flatMap((r) =>
      r.methods.map((m) => routeKey(m, r.path)),
    );
    expect(Object.keys(HTTP_ENDPOINTS).sort()).toEqual(contract.sort());
    expect(() =>
      bindRoutes('http', { ...HTTP_ENDPOINTS, 'GET /v1/extra': HTTP_ENDPOINTS['GET /v1/health'] as never }),
    ).toThrow(/stray GET \/v1\/extra/);
    const { 'GET /v1/health': _health, ...missing } = HTTP_ENDPOINTS;
    expect(() => bindRoutes('http', missing)).toThrow(/missing GET \/v1\/health/);
  });

  it('every contract route is in the CDK API, behind the function the contract names, and nothing else is', () => {
    const webhooks = ['twilio'];
    const expected = new Map(
      deployedRoutes(webhooks).flatMap(({ path, methods, route }) =>
        methods.map((m) => [routeKey(m as HttpMethod, path), functionIds()[route.function]] as const),
      ),
    );
    expect(Object.fromEntries(deployed)).toEqual(Object.fromEntries(expected));
    expect(synth.delivery.api.routeKeys.slice().sort()).toEqual([...expected.keys()].sort());
  });

  it('the local gateway sends each deployed path to the function the API integrates', () => {
    for (const [key, fn] of deployed) {
      const [, path] = key.split(' ') as [string, string];
      const concrete = path.replace(/\{[^}]+\}/g, 'x');
      const local = findRoute(concrete)?.route.function;
      expect(local ? functionIds()[local] : undefined, key).toBe(fn);
    }
  });

  it('the console pages are the local gateway’s own: in no route of the contract, deployed nowhere', () => {
    for (const route of CONSOLE_ROUTES) {
      const concrete = route.replace(/\{[^}]+\}/g, 'x');
      expect(isConsolePath(concrete), route).toBe(true);
      expect(findRoute(concrete), route).toBeUndefined();
      for (const key of deployed.keys()) expect(key.split(' ')[1]?.startsWith('/console')).toBe(false);
    }
    // And no contract route is taken by the console.
    for (const r of ROUTES) expect(isConsolePath(r.path.replace(/\{[^}]+\}/g, 'x')), r.path).toBe(false);
  });
});

// Where Lambda offers function URLs the webhooks are the provider-events function's own; where it
// does not, the API's open routes (lib/providers/webhook-ingress.ts). Either way the same paths.
describe('routes: the providers’ webhooks by Region', () => {
  let east: Synthesized;
  let gov: Synthesized;
  beforeAll(() => {
    east = synthesizeIn('us-east-1');
    gov = synthesizeIn('us-gov-west-1');
  }, 240_000);

  it('us-east-1: the provider-events function’s own URL (auth NONE, public through the URL only), no webhook route in the API', () => {
    const providerEvents = logicalId(east.delivery.functions.providerEvents.function);
    const arn = { 'Fn::GetAtt': [providerEvents, 'Arn'] };
    expect(east.delivery.webhookIngress).toBe('function-url');
    expect(east.delivery.api.routeKeys.slice().sort()).toEqual(
      deployedRoutes([])
        .flatMap(({ path, methods }) => methods.map((m) => routeKey(m as HttpMethod, path)))
        .sort(),
    );
    expect(east.delivery.api.routeKeys.some((k) => k.includes('/v1/provider-events/'))).toBe(false);
    east.deliveryTemplate.resourceCountIs('AWS::Lambda::Url', 1);
    east.deliveryTemplate.hasResourceProperties('AWS::Lambda::Url', {
      AuthType: 'NONE',
      InvokeMode: 'BUFFERED',
      TargetFunctionArn: arn,
    });
    // The two grants a function URL of auth type NONE needs, and no other public permission.
    const publicGrants = Object.values(east.deliveryTemplate.findResources('AWS::Lambda::Permission'))
      .map((r) => r.Properties)
      .filter((p) => p.Principal === '*');
    expect(publicGrants).toEqual(
      expect.arrayContaining([
        {
          Action: 'lambda:InvokeFunctionUrl',
          FunctionName: arn,
          FunctionUrlAuthType: 'NONE',
          Principal: '*',
        },
        { Action: 'lambda:InvokeFunction', FunctionName: arn, InvokedViaFunctionUrl: true, Principal: '*' },
      ]),
    );
    expect(publicGrants).toHaveLength(2);
    // The provider paths still route to provider events wherever they arrive (the local gateway too).
    expect(findRoute('/v1/provider-events/twilio')?.route.function).toBe('providerEvents');
  });

  it('us-gov-west-1 (no function URLs in GovCloud): the API’s open route per webhook provider, no function URL', () => {
    expect(gov.delivery.webhookIngress).toBe('api-routes');
    expect(gov.delivery.api.routeKeys).toContain('POST /v1/provider-events/twilio');
    gov.deliveryTemplate.hasResourceProperties('AWS::ApiGatewayV2::Route', {
      RouteKey: 'POST /v1/provider-events/twilio',
      AuthorizationType: 'NONE',
    });
    gov.deliveryTemplate.resourceCountIs('AWS::Lambda::Url', 0);
    const publicGrants = Object.values(gov.deliveryTemplate.findResources('AWS::Lambda::Permission')).filter(
      (r) => r.Properties.Principal === '*',
    );
    expect(publicGrants).toEqual([]);
  });
});

// The document's half of the same table (the rest of its checks: test/edge/openapi.test.ts).
describe('docs/openapi.json', () => {
  it('describes every route the routers serve and the CDK API deploys, and no other', () => {
    const operations = Object.entries(openApiDocument().paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((key) => key !== 'parameters')
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    // What the http function serves (its endpoints are bound to the contract when it loads) …
    const served = Object.keys(HTTP_ENDPOINTS);
    // … and what the CDK API deploys: every route, a provider route once per webhook provider.
    const deployed = synthesize({ bundle: false }).delivery.api.routeKeys;
    const webhooks = PROVIDERS.filter((p) => p.descriptor.inbound === 'webhook').map((p) => p.descriptor.id);
    const contract = deployedRoutes(webhooks).flatMap(({ path, methods }) =>
      methods.map((m) => `${m} ${path}`),
    );
    expect(operations.sort()).toEqual([...new Set([...served, ...deployed, ...contract])].sort());
    expect(operations).toEqual(
      expect.arrayContaining([
        'GET /v1/notices',
        'POST /v1/notices/{noticeId}/channels/{channel}/resolution',
        'POST /v1/notices/{noticeId}/cancel',
        'GET /v1/openapi.json',
      ]),
    );
  }, 120_000);
});
