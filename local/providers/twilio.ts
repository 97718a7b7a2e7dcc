import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { servicePort } from '../settings.ts';
import { startSmsSimulator } from '../sms-simulator/server.ts';
import type { LocalProvider } from './local-provider.ts';

/** Twilio's documented test "From" number; the simulator accepts any sender it is told to. */
const SIMULATOR_FROM = '+15005550006';

/**
 * The Twilio-compatible SMS simulator (local/sms-simulator), its messages kept in
 * `$LEDGER_DATA_DIR/twilio-simulator.json`, its credentials in local-secrets.json. Unless set,
 * TWILIO_ACCOUNT_SID / AUTH_TOKEN / FROM come from there.
 */
export const twilioLocal: LocalProvider = {
  id: 'twilio',
  service: 'twilio',
  label: 'Twilio',
  external: (env) => Boolean(env.TWILIO_BASE_URL),
  endpoint: (env) => env.TWILIO_BASE_URL,
  credentials: () => ({
    accountSid: `AC${randomBytes(16).toString('hex')}`,
    authToken: randomBytes(16).toString('hex'),
    from: SIMULATOR_FROM,
  }),
  async start(context, credentials) {
    const env = context.env;
    const accountSid = env.TWILIO_ACCOUNT_SID || (credentials.accountSid as string);
    const authToken = env.TWILIO_AUTH_TOKEN || (credentials.authToken as string);
    const from = env.TWILIO_FROM || (credentials.from as string);
    const storeFile = join(context.dataDir, 'twilio-simulator.json');
    const simulator = await startSmsSimulator({
      port: servicePort(env, 'twilio'),
      accountSid,
      authToken,
      fromNumbers: [from],
      storeFile,
    });
    return {
      env: {
        TWILIO_BASE_URL: simulator.baseUrl,
        TWILIO_ACCOUNT_SID: accountSid,
        TWILIO_AUTH_TOKEN: authToken,
        TWILIO_FROM: from,
      },
      endpoint: simulator.baseUrl,
      describe: `started (SMS simulator; messages: ${simulator.baseUrl}/__messages, kept in ${storeFile})`,
      simulator,
      stop: () => simulator.close(),
    };
  },
};
