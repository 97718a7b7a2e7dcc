import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../lambdas/contract/config-error.ts';
import { RETIRED_NAMES } from '../../lambdas/contract/retired-settings.ts';
import { SETTINGS } from '../../lambdas/contract/settings.ts';
import { readConfig } from '../../lambdas/edge/config.ts';

describe('runtime configuration: the names retired by the one vocabulary (docs/deploy.md)', () => {
  it('a process given an old name refuses to start, naming what replaced it, instead of running without it', () => {
    expect(() => readConfig({ EMAIL_RATE_BUDGET_PER_SECOND: '5' })).toThrow(ConfigError);
    expect(() => readConfig({ EMAIL_RATE_BUDGET_PER_SECOND: '5' })).toThrow(
      'EMAIL_RATE_BUDGET_PER_SECOND was renamed: use EMAIL_SEND_RATE_PER_SECOND',
    );
    expect(() => readConfig({ RETENTION_DAYS: '30' })).toThrow('use LEDGER_RETENTION_DAYS');
    // Empty is unset (a shell's `VAR= npm start`): nothing to refuse.
    expect(() => readConfig({ SMS_RATE_BUDGET_PER_SECOND: '' })).not.toThrow();
    expect(readConfig({ SMS_SEND_RATE_PER_SECOND: '5' }).SMS_SEND_RATE_PER_SECOND).toBe(5);
  });

  it('no retired name is a setting again, and each names a replacement', () => {
    for (const [old, replacement] of Object.entries(RETIRED_NAMES)) {
      expect(old in SETTINGS, old).toBe(false);
      expect(replacement.length, old).toBeGreaterThan(0);
    }
  });
});
