import { Fn } from 'aws-cdk-lib';
import { type FunctionUrl, FunctionUrlAuthType, InvokeMode } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { acknowledge } from '../nag.ts';
import type { NoticeFunction } from './notice-function.ts';

export interface WebhookFunctionUrlProps {
  /** The provider-events function: the URL invokes it. */
  readonly providerEvents: NoticeFunction;
}

/**
 * Where webhook providers post their reports when Lambda offers function URLs in the Region
 * (lib/providers/webhook-ingress.ts): the provider-events function's own URL, auth NONE. A
 * provider cannot sign with SigV4; each request is authenticated by the provider's own signature,
 * which its module checks before anything is read or written (401/403 otherwise), so a gateway in
 * front would add a price per request and nothing the signature does not give. The function
 * routes on the path itself (`POST /v1/provider-events/<id>` for the deployed webhook providers,
 * 404 problem+json for anything else); its reserved concurrency bounds the open ingress
 * (lib/providers/webhook-throttle.ts `webhookConcurrency`), set by the delivery stack.
 */
export class WebhookFunctionUrl extends Construct {
  readonly functionUrl: FunctionUrl;
  /**
   * `https://<url-id>.lambda-url.<region>.on.aws`, without the trailing slash the URL has: the
   * origin providers call back (PUBLIC_BASE_URL), spelled as the API's endpoint is.
   */
  readonly origin: string;

  constructor(scope: Construct, id: string, props: WebhookFunctionUrlProps) {
    super(scope, id);
    // Buffered: a report is a small request answered once; CDK grants both lambda:InvokeFunctionUrl
    // (auth type NONE) and lambda:InvokeFunction when invoked through the URL, as Lambda requires.
    this.functionUrl = props.providerEvents.function.addFunctionUrl({
      authType: FunctionUrlAuthType.NONE,
      invokeMode: InvokeMode.BUFFERED,
    });
    this.origin = Fn.join('', ['https://', Fn.select(2, Fn.split('/', this.functionUrl.url))]);
    acknowledge(props.providerEvents.function, {
      rule: 'HIPAA.Security-LambdaFunctionPublicAccessProhibited',
      reason:
        'Public only through its function URL, for provider webhooks that cannot sign with SigV4: every request ' +
        'is verified against the provider signature (HMAC or public key over the request) before anything is ' +
        'read or written, forged or unsigned ones get 401/403; reserved concurrency bounds what it may take.',
    });
  }
}
