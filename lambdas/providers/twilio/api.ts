/** The parts of Twilio's REST API that the transport and the lookup share. */

/** What every call to Twilio's REST API needs. `baseUrl` is the API origin, e.g. `https://api.twilio.com`. */
export interface TwilioApiConfig {
  readonly baseUrl: string;
  readonly accountSid: string;
  readonly authToken: string;
  /** Injected for tests; defaults to the global `fetch`. */
  readonly fetch?: typeof fetch;
}

export const TWILIO_API_VERSION = '2010-04-01';

export function twilioMessagesUrl(config: Pick<TwilioApiConfig, 'baseUrl' | 'accountSid'>): string {
  return `${config.baseUrl.replace(/\/+$/, '')}/${TWILIO_API_VERSION}/Accounts/${encodeURIComponent(config.accountSid)}/Messages.json`;
}

export function twilioBasicAuth(config: Pick<TwilioApiConfig, 'accountSid' | 'authToken'>): string {
  return `Basic ${Buffer.from(`${config.accountSid}:${config.authToken}`, 'utf8').toString('base64')}`;
}
