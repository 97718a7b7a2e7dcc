import { providerEventsPath } from '../../contract/routes.ts';
import { descriptor } from './descriptor.ts';

/** The query parameter of the StatusCallback URL that names the intent (`?ref=ntc_…-sms`). */
export const CALLBACK_CORRELATION_PARAM = 'ref';

/** The StatusCallback URL our transport gives Twilio: this deployment's webhook for the module. */
export function callbackUrl(publicBaseUrl: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}${providerEventsPath(descriptor.id)}`;
}
