import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { providerEventsPath } from '../../lambdas/contract/routes.ts';
import { startResendSimulator } from '../email-simulators/resend.ts';
import { servicePort } from '../settings.ts';
import type { LocalProvider } from './local-provider.ts';

/** The sender the simulator's emails come from unless RESEND_FROM says otherwise. */
const SIMULATOR_FROM = 'Notices <notices@example.com>';

/**
 * The Resend simulator (local/email-simulators/resend.ts): its emails, idempotency keys and
 * webhook outbox kept in `$LEDGER_DATA_DIR/resend-simulator.jsonl`, its API key and webhook
 * signing secret in local-secrets.json. Webhooks (Svix-signed) go to this stack's
 * `POST /v1/provider-events/resend`. Unless set, RESEND_API_KEY / RESEND_WEBHOOK_SECRET /
 * RESEND_FROM come from there; with RESEND_BASE_URL set, nothing is started.
 */
export const resendLocal: LocalProvider = {
  id: 'resend',
  service: 'resend',
  label: 'Resend',
  external: (env) => Boolean(env.RESEND_BASE_URL),
  endpoint: (env) => env.RESEND_BASE_URL,
  credentials: () => ({
    apiKey: `re_${randomBytes(16).toString('hex')}`,
    webhookSecret: `whsec_${randomBytes(24).toString('base64')}`,
  }),
  async start(context, credentials) {
    const env = context.env;
    const apiKey = env.RESEND_API_KEY || (credentials.apiKey as string);
    const webhookSecret = env.RESEND_WEBHOOK_SECRET || (credentials.webhookSecret as string);
    const storeFile = join(context.dataDir, 'resend-simulator.jsonl');
    const publicBaseUrl = env.PUBLIC_BASE_URL?.replace(/\/+$/, '');
    const simulator = await startResendSimulator({
      port: servicePort(env, 'resend'),
      apiKey,
      webhookSecret,
      ...(publicBaseUrl ? { webhookUrl: `${publicBaseUrl}${providerEventsPath('resend')}` } : {}),
      storeFile,
    });
    return {
      env: {
        RESEND_BASE_URL: simulator.baseUrl,
        RESEND_API_KEY: apiKey,
        RESEND_WEBHOOK_SECRET: webhookSecret,
        RESEND_FROM: env.RESEND_FROM || SIMULATOR_FROM,
      },
      endpoint: simulator.baseUrl,
      describe: `started (Resend simulator; emails: ${simulator.baseUrl}/__emails, kept in ${storeFile})`,
      simulator,
      stop: () => simulator.close(),
    };
  },
};
