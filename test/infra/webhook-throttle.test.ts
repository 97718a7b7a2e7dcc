/**
 * Each provider webhook route's throttle follows from what the provider posts at the configured
 * send rates (lib/providers/webhook-throttle.ts): a fixed 20 requests/s capped Twilio's status
 * callbacks (two per SMS) at about 10 SMS/s, whatever the account could send.
 */
import { describe, expect, it } from 'vitest';
import { readConfig } from '../../lib/config.ts';
import type { ProviderBinding } from '../../lib/providers/binding.ts';
import { deployedBindings, PROVIDER_BINDINGS } from '../../lib/providers/registry.ts';
import { webhookThrottles } from '../../lib/providers/webhook-throttle.ts';
import { emailEventSource } from '../../lib/stacks/delivery-stack.ts';
import { synthesize } from './synth.ts';

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
