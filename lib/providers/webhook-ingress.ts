import { Token } from 'aws-cdk-lib';
import { RegionInfo } from 'aws-cdk-lib/region-info';

/**
 * How providers' webhooks (`POST /v1/provider-events/<id>`) reach the provider-events function:
 *  - `function-url`: the function's own Lambda function URL (auth NONE: the provider's signature is
 *    the authentication, checked by its module), no API Gateway in front: a webhook request costs
 *    a Lambda invocation only, not also API Gateway's $1 per million (an SMS provider posts two
 *    status callbacks per message). Its bound is the function's reserved concurrency (./webhook-throttle.ts).
 *  - `api-routes`: one open route per webhook provider on the HTTP API, each throttled apart
 *    (./webhook-throttle.ts), where Lambda has no function URLs.
 */
export type WebhookIngress = 'function-url' | 'api-routes';

/**
 * Commercial (`aws` partition) Regions where Lambda has no function URLs, as the Lambda developer
 * guide lists them (https://docs.aws.amazon.com/lambda/latest/dg/lambda-urls.html, "Function URLs
 * are not supported in the following Regions"). Other partitions have none at all: AWS GovCloud
 * (US), us-gov-west-1 and us-gov-east-1 ("AWS Lambda Function URLs is not available",
 * https://docs.aws.amazon.com/govcloud-us/latest/UserGuide/govcloud-lambda.html), the China
 * Regions (https://docs.amazonaws.cn/en_us/aws/latest/userguide/lambda.html) and the isolated
 * ones; CloudFormation there has no `AWS::Lambda::Url` (cfn-lint E3006 in `npm run deploy:check`).
 */
export const REGIONS_WITHOUT_FUNCTION_URLS: readonly string[] = [
  'ap-south-2',
  'ap-southeast-4',
  'ap-southeast-5',
  'ap-southeast-6',
  'ap-southeast-7',
  'ap-east-2',
  'ca-west-1',
  'eu-south-2',
  'eu-central-2',
  'il-central-1',
  'me-central-1',
];

/**
 * The ingress of providers' webhooks in a deployment, decided here only:
 *  - an unresolved (token) Region — the environment-agnostic synth, made without an account
 *    (`npm run synth` offline; `cdk deploy` always resolves one, lib/app.ts) — gets API routes:
 *    that template deploys in every partition, GovCloud included, and cfn-lint checks it against
 *    every Region of deploy:check; a function URL there would fail wherever Lambda has none;
 *  - `publicBaseUrl` set gets API routes: it names an origin of the operator's in front of the
 *    API (an API Gateway custom domain mapped to the `$default` stage, docs/deploy.md), where a
 *    provider's callback reaches only API routes; without it, the function URL is that origin;
 *  - a Region of the commercial partition without the listed exceptions gets the function URL;
 *    any other partition, or a Region CDK's region facts do not know, API routes.
 */
export function webhookIngress(region: string, publicBaseUrl: string | undefined): WebhookIngress {
  if (Token.isUnresolved(region) || publicBaseUrl !== undefined) return 'api-routes';
  if (RegionInfo.get(region).partition !== 'aws') return 'api-routes';
  return REGIONS_WITHOUT_FUNCTION_URLS.includes(region) ? 'api-routes' : 'function-url';
}
