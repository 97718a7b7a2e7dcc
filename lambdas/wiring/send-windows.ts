import { ConfigError } from '../contract/config-error.ts';
import {
  InvalidSendWindowError,
  isKnownTimeZone,
  parseSendWindow,
  type SendWindow,
  type SendWindows,
} from '../domain/send-window.ts';
import type { Config } from '../edge/config.ts';

/**
 * The send windows (docs/architecture.md §12) from `EMAIL_SEND_WINDOW`, `SMS_SEND_WINDOW` and
 * `SEND_WINDOW_TIME_ZONE`: a malformed window or an unknown zone stops the process at start,
 * naming the variable, rather than sending at 03:00 or holding everything.
 */
export function sendWindowsOf(
  config: Pick<Config, 'EMAIL_SEND_WINDOW' | 'SMS_SEND_WINDOW' | 'SEND_WINDOW_TIME_ZONE'>,
): SendWindows {
  const window = (name: 'EMAIL_SEND_WINDOW' | 'SMS_SEND_WINDOW'): SendWindow | undefined => {
    const text = config[name];
    if (text === undefined) return undefined;
    try {
      return parseSendWindow(text);
    } catch (error) {
      if (error instanceof InvalidSendWindowError)
        throw new ConfigError(`invalid configuration: ${name}: ${error.message}`);
      throw error;
    }
  };
  const zone = config.SEND_WINDOW_TIME_ZONE;
  if (!isKnownTimeZone(zone)) {
    throw new ConfigError(
      'invalid configuration: SEND_WINDOW_TIME_ZONE: must be an IANA time zone name, e.g. Europe/Berlin',
    );
  }
  return { email: window('EMAIL_SEND_WINDOW'), sms: window('SMS_SEND_WINDOW'), defaultZone: zone };
}
