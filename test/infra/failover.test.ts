/**
 * Provider failover in the CDK app (`smsFallbackProvider`, issue 24): the fallback is selected, not
 * retained — its secret, its event rule, the primary's webhook route, and the SMS sender's grants for
 * BOTH transports are deployed; every function is told the fallback; a fallback that cannot be one is
 * refused naming the key.
 */

import { describe, expect, it } from 'vitest';
import { FUNCTION_NAMES } from '../../lambdas/contract/functions.ts';
import { readConfig } from '../../lib/config.ts';
import { bundleSelection } from '../../lib/stacks/delivery-stack.ts';
import { actionsOf, logicalId, roleStatements, synthesize } from './synth.ts';

describe('smsProvider: twilio, smsFallbackProvider: eum', () => {
  const synth = synthesize({
    bundle: false,
    settings: {
      smsProvider: 'twilio',
      smsFallbackProvider: 'eum',
      eumOriginationIdentity: 'phone-0123456789abcdef',
    },
  });
  const delivery = synth.deliveryTemplate;

  it('grants the sms sender both transports: the Twilio secret and EUM SendTextMessage', () => {
    const role = logicalId(synth.delivery.functions.sendSms.role);
    const statements = roleStatements(delivery, role);
    const actions = statements.flatMap(actionsOf);
    expect(actions).toContain('sms-voice:SendTextMessage');
    expect(actions).toContain('secretsmanager:GetSecretValue');
    expect(
      JSON.stringify(statements.filter((s) => actionsOf(s).includes('secretsmanager:GetSecretValue'))),
    ).toMatch(/TwilioSecret/i);
    // The e-mail sender gets nothing of either.
    const emailActions = roleStatements(delivery, logicalId(synth.delivery.functions.sendEmail.role)).flatMap(
      actionsOf,
    );
    expect(emailActions).not.toContain('sms-voice:SendTextMessage');
    expect(bundleSelection('sendSms', synth.config.providers).providers).toEqual(['twilio', 'eum']);
  });

  it("deploys both providers' inbound paths: Twilio's webhook route and EUM's event rule", () => {
    expect(synth.delivery.api.routeKeys).toContain('POST /v1/provider-events/twilio');
    const rules = Object.values(delivery.findResources('AWS::Events::Rule'));
    expect(JSON.stringify(rules)).toMatch(/sms-voice/);
    expect(bundleSelection('providerEvents', synth.config.providers).providers).toEqual(
      expect.arrayContaining(['twilio', 'eum']),
    );
    expect(bundleSelection('reconciler', synth.config.providers).providers).toEqual(
      expect.arrayContaining(['twilio', 'eum']),
    );
  });

  it('tells every function the fallback; it is selected, not retained', () => {
    const functions = Object.values(delivery.findResources('AWS::Lambda::Function'));
    expect(functions).toHaveLength(FUNCTION_NAMES.length);
    for (const fn of functions) {
      expect(fn.Properties.Environment.Variables.SMS_FALLBACK_PROVIDER).toBe('eum');
      expect(fn.Properties.Environment.Variables.RETAINED_PROVIDERS).toBeUndefined();
      expect(fn.Properties.Environment.Variables.EMAIL_FALLBACK_PROVIDER).toBeUndefined();
    }
    expect(synth.config.providers).toMatchObject({ sms: 'twilio', retained: [], fallbacks: { sms: 'eum' } });
  });

  it('alarms on failovers', () => {
    const alarms = delivery.findResources('AWS::CloudWatch::Alarm');
    const failovers = Object.values(alarms).filter((a) => a.Properties.MetricName === 'ProviderFailovers');
    expect(failovers).toHaveLength(1);
    expect(failovers[0]?.Properties).toMatchObject({
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });
});

describe('a fallback that cannot be one is refused, naming the key', () => {
  it.each([
    [
      { smsProvider: 'twilio', smsFallbackProvider: 'twilio' },
      'smsFallbackProvider: "twilio" is already smsProvider',
    ],
    [{ smsFallbackProvider: 'ses' }, 'smsFallbackProvider: provider "ses" does not send sms'],
    [{ smsFallbackProvider: 'nope' }, 'smsFallbackProvider: no provider "nope"'],
    [{ smsProvider: 'none', smsFallbackProvider: 'eum' }, 'smsFallbackProvider: smsProvider is none'],
  ])('%o', (settings, message) => {
    expect(() => readConfig(settings)).toThrow(message);
  });
});
