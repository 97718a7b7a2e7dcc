/**
 * A deployment of one channel (`smsProvider: "none"`, issue 21): no provider secret, no event
 * source, no grant and no provider code for the channel's sender, no webhook route, and every
 * function told so (`SMS_PROVIDER=none`, so intake refuses the channel). Both channels `none` is
 * refused.
 */
import { describe, expect, it } from 'vitest';
import { FUNCTION_NAMES } from '../../lambdas/contract/functions.ts';
import { readConfig } from '../../lib/config.ts';
import { bundleSelection } from '../../lib/stacks/delivery-stack.ts';
import { actionsOf, logicalId, roleStatements, synthesize } from './synth.ts';

describe('smsProvider: none', () => {
  const synth = synthesize({ bundle: false, settings: { smsProvider: 'none' } });
  const delivery = synth.deliveryTemplate;

  it('creates no provider secret for the channel, and no webhook route', () => {
    const secrets = Object.values(synth.statefulTemplate.findResources('AWS::SecretsManager::Secret'));
    expect(JSON.stringify(secrets)).not.toMatch(/twilio/i);
    expect(synth.delivery.api.routeKeys.filter((key) => key.includes('/v1/provider-events/'))).toEqual([]);
  });

  it('gives the sms sender no event source and no grant beyond its own log group', () => {
    // The queues' event sources (the ledger stream's has a starting position): e-mail's three lanes
    // and the watch's.
    const mappings = Object.values(delivery.findResources('AWS::Lambda::EventSourceMapping')).filter(
      (m) => m.Properties.StartingPosition === undefined,
    );
    expect(mappings).toHaveLength(4);
    expect(JSON.stringify(mappings)).not.toMatch(/Sms/);
    const role = logicalId(synth.delivery.functions.sendSms.role);
    const actions = roleStatements(delivery, role).flatMap(actionsOf);
    expect(actions.filter((a) => !a.startsWith('logs:'))).toEqual([]);
    expect(bundleSelection('sendSms', synth.config.providers).providers).toEqual([]);
  });

  it('tells every function the channel has no provider', () => {
    const functions = Object.values(delivery.findResources('AWS::Lambda::Function'));
    expect(functions).toHaveLength(FUNCTION_NAMES.length);
    for (const fn of functions) expect(fn.Properties.Environment.Variables.SMS_PROVIDER).toBe('none');
  });

  it('refuses both channels none: nothing could be sent', () => {
    expect(() => readConfig({ emailProvider: 'none', smsProvider: 'none' })).toThrow(
      'emailProvider and smsProvider are both none: nothing could be sent',
    );
  });
});
