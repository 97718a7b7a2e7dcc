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
    expect(() => readConfig({ RETENTION_DAYS: '30' })).toThrow('use HOT_RETENTION');
    expect(() => readConfig({ LEDGER_RETENTION_DAYS: '400' })).toThrow('use HOT_RETENTION');
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

describe('runtime configuration: HOT_RETENTION, an ISO 8601 duration read as milliseconds', () => {
  it('defaults to 35 days and reads a local stack’s seconds', () => {
    expect(readConfig({}).HOT_RETENTION).toBe(35 * 86_400_000);
    expect(readConfig({ HOT_RETENTION: 'PT20S' }).HOT_RETENTION).toBe(20_000);
    expect(readConfig({ HOT_RETENTION: 'P1DT2H' }).HOT_RETENTION).toBe(26 * 3_600_000);
  });

  it.each(['PT5S', 'P1M', '35', 'P', 'PT'])(
    'refuses %s, naming the variable and never a shorter window',
    (value) => {
      expect(() => readConfig({ HOT_RETENTION: value })).toThrow(
        /HOT_RETENTION: must be an ISO 8601 duration/,
      );
    },
  );
});
