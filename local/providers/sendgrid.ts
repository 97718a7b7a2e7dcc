import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { providerEventsPath } from '../../lambdas/contract/routes.ts';
import { startSendGridSimulator } from '../email-simulators/sendgrid.ts';
import { servicePort } from '../settings.ts';
import type { LocalProvider } from './local-provider.ts';

/**
 * The SendGrid simulator (local/email-simulators/sendgrid.ts): its messages and webhook outbox
 * kept in `$LEDGER_DATA_DIR/sendgrid-simulator.jsonl`, its API key and the Event Webhook's ECDSA
 * signing key in local-secrets.json (so signatures verify across restarts). Events go to this
 * stack's `POST /v1/provider-events/sendgrid`. Unless set, SENDGRID_API_KEY, SENDGRID_FROM and
 * SENDGRID_WEBHOOK_PUBLIC_KEY come from there; with SENDGRID_BASE_URL set, nothing is started.
 * `SENDGRID_EMAIL_ACTIVITY=true` gives the simulated account the Email Activity add-on too.
 */
export const sendgridLocal: LocalProvider = {
  id: 'sendgrid',
  service: 'sendgrid',
  label: 'SendGrid',
  external: (env) => Boolean(env.SENDGRID_BASE_URL),
  endpoint: (env) => env.SENDGRID_BASE_URL,
  credentials: () => ({
    apiKey: `SG.${randomBytes(11).toString('base64url')}.${randomBytes(32).toString('base64url')}`,
    signingKeyPem: generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString(),
  }),
  async start(context, credentials) {
    const env = context.env;
    const apiKey = env.SENDGRID_API_KEY || (credentials.apiKey as string);
    const storeFile = join(context.dataDir, 'sendgrid-simulator.jsonl');
    const publicBaseUrl = env.PUBLIC_BASE_URL?.replace(/\/+$/, '');
    const activity = env.SENDGRID_EMAIL_ACTIVITY === 'true';
    const simulator = await startSendGridSimulator({
      port: servicePort(env, 'sendgrid'),
      apiKey,
      privateKeyPem: credentials.signingKeyPem as string,
      ...(publicBaseUrl ? { webhookUrl: `${publicBaseUrl}${providerEventsPath('sendgrid')}` } : {}),
      storeFile,
      activity,
    });
    return {
      env: {
        SENDGRID_BASE_URL: simulator.baseUrl,
        SENDGRID_API_KEY: apiKey,
        SENDGRID_WEBHOOK_PUBLIC_KEY: env.SENDGRID_WEBHOOK_PUBLIC_KEY || simulator.publicKey,
        SENDGRID_FROM: env.SENDGRID_FROM || 'notices@example.com',
        ...(activity ? { SENDGRID_EMAIL_ACTIVITY: 'true' } : {}),
      },
      endpoint: simulator.baseUrl,
      describe: `started (SendGrid simulator; messages: ${simulator.baseUrl}/__messages, kept in ${storeFile})`,
      simulator,
      stop: () => simulator.close(),
    };
  },
};
