/**
 * Names retired by issue 20's one vocabulary (docs/deploy.md "Vocabulary change"): a process
 * given one refuses to start, naming what replaced it, rather than silently running without the
 * setting (an `EMAIL_RATE_BUDGET_PER_SECOND=5` ignored would send unpaced). Deploy keys are
 * refused by the CDK as "not a setting", with the same hint.
 */
export const RETIRED_NAMES: Readonly<Record<string, string>> = {
  EMAIL_RATE_BUDGET_PER_SECOND: 'EMAIL_SEND_RATE_PER_SECOND (the shared rate budget)',
  SMS_RATE_BUDGET_PER_SECOND: 'SMS_SEND_RATE_PER_SECOND (the shared rate budget)',
  RETENTION_DAYS: 'HOT_RETENTION (an ISO 8601 duration, e.g. P35D)',
  LEDGER_RETENTION_DAYS: 'HOT_RETENTION (an ISO 8601 duration, e.g. P35D)',
  ledgerRetentionDays: 'hotRetention (an ISO 8601 duration, e.g. "P35D")',
  reconcileIntervalMinutes: 'reconcileIntervalMs (milliseconds, whole minutes)',
  sesConfigurationSetName: 'sesConfigurationSet',
  eumConfigurationSetName: 'eumConfigurationSet',
  eumOptOutListName: 'eumOptOutList',
};

/** The retired names among `names`, each with what replaced it, as one message; undefined: none. */
export function retiredNamesMessage(names: Iterable<string>): string | undefined {
  const found = [...names].filter((name) => Object.hasOwn(RETIRED_NAMES, name));
  if (found.length === 0) return undefined;
  return found.map((name) => `${name} was renamed: use ${RETIRED_NAMES[name]} (docs/deploy.md)`).join('; ');
}
