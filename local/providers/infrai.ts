import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { startInfraiSimulator } from '../infrai-simulator/server.ts';
import { servicePort } from '../settings.ts';
import type { LocalProvider } from './local-provider.ts';

/**
 * The Infrai-style gateway simulator (local/infrai-simulator), its messages, events and
 * suppression list kept in `$LEDGER_DATA_DIR/infrai-simulator.json`, its API key in
 * local-secrets.json. Nothing is fed: the gateway pushes no events, the reconciler pulls them.
 * With INFRAI_BASE_URL set, nothing is started.
 */
export const infraiLocal: LocalProvider = {
  id: 'infrai',
  service: 'infrai',
  label: 'Infrai',
  external: (env) => Boolean(env.INFRAI_BASE_URL),
  endpoint: (env) => env.INFRAI_BASE_URL,
  credentials: () => ({ apiKey: `ifr_pk_proj_${randomBytes(12).toString('hex')}` }),
  async start(context, credentials) {
    const apiKey = context.env.INFRAI_API_KEY || (credentials.apiKey as string);
    const storeFile = join(context.dataDir, 'infrai-simulator.json');
    const simulator = await startInfraiSimulator({
      port: servicePort(context.env, 'infrai'),
      apiKey,
      storeFile,
    });
    return {
      env: { INFRAI_BASE_URL: simulator.baseUrl, INFRAI_API_KEY: apiKey },
      endpoint: simulator.baseUrl,
      describe: `started (gateway simulator; messages: ${simulator.baseUrl.replace(/\/v1$/, '')}/__messages, kept in ${storeFile})`,
      simulator,
      stop: () => simulator.close(),
    };
  },
};
