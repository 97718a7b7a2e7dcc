/**
 * Each provider webhook route's throttle follows from what the provider posts at the configured
 * send rates (lib/providers/webhook-throttle.ts): a fixed 20 requests/s capped Twilio's status
 * callbacks (two per SMS) at about 10 SMS/s, whatever the account could send. Where the webhooks
 * arrive at the provider-events function's URL instead (lib/providers/webhook-ingress.ts), the
 * same rates size that function's reserved concurrency, the open ingress's bound there.
 */
import { Aws } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { readConfig } from '../../lib/config.ts';
import type { ProviderBinding } from '../../lib/providers/binding.ts';
import { deployedBindings, PROVIDER_BINDINGS } from '../../lib/providers/registry.ts';
import { REGIONS_WITHOUT_FUNCTION_URLS, webhookIngress } from '../../lib/providers/webhook-ingress.ts';
import {
  LAMBDA_ACCOUNT_CONCURRENCY,
  WEBHOOK_REQUEST_SECONDS,
  webhookConcurrency,
  webhookThrottles,
} from '../../lib/providers/webhook-throttle.ts';
import { emailEventSource } from '../../lib/stacks/delivery-stack.ts';
import { logicalId, synthesize, synthesizeIn } from './synth.ts';

/** The throttles the delivery stack derives from these settings. */
function throttles(settings: Record<string, unknown>) {
  const config = readConfig(settings);
  const bindings = deployedBindings(config.providers);
  return webhookThrottles(config, bindings, {
    email: emailEventSource(config, bindings).recordsPerCall,
    sms: 1,
  });
}

describe('provider webhook throttles', () => {
  it('without a send rate: the configured floor (providerCallbackRateLimit / BurstLimit)', () => {
    expect(throttles({})).toEqual({ twilio: { rateLimit: 20, burstLimit: 40 } });
    expect(throttles({ providerCallbackRateLimit: 7, providerCallbackBurstLimit: 9 })).toEqual({
      twilio: { rateLimit: 7, burstLimit: 14 },
    });
  });

  it('twice the provider’s requests per message at the channel’s rate: Twilio at 30 SMS/s takes 120 callbacks/s', () => {
    expect(throttles({ smsSendRatePerSecond: 30 })).toEqual({ twilio: { rateLimit: 120, burstLimit: 240 } });
    // Below the floor, the floor.
    expect(throttles({ smsSendRatePerSecond: 2 })).toEqual({ twilio: { rateLimit: 20, burstLimit: 40 } });
  });

  it('a batching e-mail provider: calls/s times the messages a call carries', () => {
    // Resend, 2 calls/s of up to 50 e-mails: 100 e-mails/s, two events each, twice over.
    expect(
      throttles({
        emailProvider: 'resend',
        emailSendRatePerSecond: 2,
        emailBatchMax: 50,
        smsSendRatePerSecond: 0,
      }),
    ).toEqual({ resend: { rateLimit: 400, burstLimit: 800 }, twilio: { rateLimit: 20, burstLimit: 40 } });
    expect(
      throttles({ emailProvider: 'resend', emailSendRatePerSecond: 2, emailBatchMax: 1 }).resend,
    ).toEqual({
      rateLimit: 20,
      burstLimit: 40,
    });
  });

  it('a retained provider sends nothing new: its route keeps the floor; the account limit caps every route', () => {
    expect(
      throttles({ smsProvider: 'eum', retainedProviders: ['twilio'], smsSendRatePerSecond: 100 }),
    ).toEqual({ twilio: { rateLimit: 20, burstLimit: 40 } });
    expect(throttles({ smsSendRatePerSecond: 5_000 })).toEqual({
      twilio: { rateLimit: 10_000, burstLimit: 5_000 },
    });
  });

  it('every webhook provider’s binding says how many requests a message makes', () => {
    const webhooks = PROVIDER_BINDINGS.filter((b) => b.descriptor.inbound === 'webhook');
    expect(webhooks.map((b) => b.descriptor.id).sort()).toEqual(['resend', 'sendgrid', 'twilio']);
    for (const binding of webhooks) expect(binding.webhookEventsPerMessage, binding.descriptor.id).toBe(2);
    const silent: ProviderBinding = {
      ...(webhooks[0] as ProviderBinding),
      webhookEventsPerMessage: undefined,
    };
    const config = readConfig({});
    expect(() => webhookThrottles(config, [silent], { email: 1, sms: 1 })).toThrow(
      /declares no webhookEventsPerMessage/,
    );
  });

  it('the synthesized stage carries the derived throttle on the provider’s route', () => {
    const { deliveryTemplate } = synthesize({ settings: { smsSendRatePerSecond: 30 }, bundle: false });
    deliveryTemplate.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      DefaultRouteSettings: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 },
      RouteSettings: {
        'POST /v1/provider-events/twilio': { ThrottlingRateLimit: 120, ThrottlingBurstLimit: 240 },
      },
    });
  }, 120_000);
});

describe('the webhooks’ ingress by Region (lib/providers/webhook-ingress.ts)', () => {
  it('function URLs in the commercial partition, API routes where Lambda has none, for a token Region or behind publicBaseUrl', () => {
    for (const region of ['us-east-1', 'eu-west-1', 'ap-northeast-1', 'sa-east-1'])
      expect(webhookIngress(region, undefined), region).toBe('function-url');
    // GovCloud and China have no function URLs; neither do the commercial Regions the Lambda guide lists.
    for (const region of ['us-gov-west-1', 'us-gov-east-1', 'cn-north-1', 'cn-northwest-1', 'us-iso-east-1'])
      expect(webhookIngress(region, undefined), region).toBe('api-routes');
    expect(REGIONS_WITHOUT_FUNCTION_URLS).toEqual(
      expect.arrayContaining(['ap-south-2', 'ap-southeast-4', 'ca-west-1', 'il-central-1', 'me-central-1']),
    );
    for (const region of REGIONS_WITHOUT_FUNCTION_URLS)
      expect(webhookIngress(region, undefined), region).toBe('api-routes');
    // A Region CDK's facts do not know yet: the routes, which every Region has.
    expect(webhookIngress('xx-nowhere-9', undefined)).toBe('api-routes');
    // The environment-agnostic synth deploys anywhere, GovCloud included.
    expect(webhookIngress(Aws.REGION, undefined)).toBe('api-routes');
    // A custom domain of the API is where providers call: only API routes are behind it.
    expect(webhookIngress('us-east-1', 'https://notices.example.org')).toBe('api-routes');
  });

  it('behind the function URL, the throttles’ rates size the reserved concurrency: rate × 0.5 s, at most 1 000', () => {
    expect(WEBHOOK_REQUEST_SECONDS).toBe(0.5);
    expect(webhookConcurrency(throttles({}))).toBe(10);
    expect(webhookConcurrency(throttles({ smsSendRatePerSecond: 30 }))).toBe(60);
    // Every webhook provider's rate counts: Resend's 400 requests/s and Twilio's floor of 20.
    expect(
      webhookConcurrency(
        throttles({ emailProvider: 'resend', emailSendRatePerSecond: 2, emailBatchMax: 50 }),
      ),
    ).toBe(210);
    expect(webhookConcurrency(throttles({ smsSendRatePerSecond: 5_000 }))).toBe(LAMBDA_ACCOUNT_CONCURRENCY);
    expect(webhookConcurrency({ twilio: { rateLimit: 1, burstLimit: 2 } })).toBe(1);
  });

  it('synthesized: us-gov-west-1 throttles the webhook route; us-east-1 reserves concurrency instead, the setting overriding it', () => {
    const gov = synthesizeIn('us-gov-west-1', { smsSendRatePerSecond: 30 });
    gov.deliveryTemplate.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      RouteSettings: {
        'POST /v1/provider-events/twilio': { ThrottlingRateLimit: 120, ThrottlingBurstLimit: 240 },
      },
    });
    const reserved = (synth: ReturnType<typeof synthesize>) =>
      synth.deliveryTemplate.findResources('AWS::Lambda::Function')[
        logicalId(synth.delivery.functions.providerEvents.function)
      ]?.Properties.ReservedConcurrentExecutions;
    expect(reserved(gov)).toBeUndefined();

    const east = synthesizeIn('us-east-1', { smsSendRatePerSecond: 30 });
    expect(reserved(east)).toBe(60);
    // No route, so no route settings: the stage keeps its default throttle only.
    const stage = Object.values(east.deliveryTemplate.findResources('AWS::ApiGatewayV2::Stage'))[0];
    expect(stage?.Properties.RouteSettings).toBeUndefined();
    expect(stage?.Properties.DefaultRouteSettings).toEqual({
      ThrottlingRateLimit: 50,
      ThrottlingBurstLimit: 100,
    });

    const chosen = synthesizeIn('us-east-1', { reservedConcurrency: { providerEvents: 7 } });
    expect(reserved(chosen)).toBe(7);
  }, 240_000);
});
