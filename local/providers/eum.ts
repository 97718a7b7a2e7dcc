import { readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startEumSimulator } from '../eum-simulator/server.ts';
import { servicePort } from '../settings.ts';
import type { LocalProvider } from './local-provider.ts';

const FEED_INTERVAL_MS = 500;

/**
 * The End User Messaging SMS simulator (local/eum-simulator), its messages, opt-out lists and
 * event log kept in `$LEDGER_DATA_DIR/eum-simulator.json`, plus the feed that hands its events to
 * the provider-events function the way the EventBridge rule does in AWS. The SDK finds it through
 * its own `AWS_ENDPOINT_URL_PINPOINT_SMS_VOICE_V2`; set, nothing is started (and nothing is fed).
 */
export const eumLocal: LocalProvider = {
  id: 'eum',
  service: 'eum',
  label: 'EUM SMS',
  external: (env) => Boolean(env.AWS_ENDPOINT_URL_PINPOINT_SMS_VOICE_V2),
  endpoint: (env) => env.AWS_ENDPOINT_URL_PINPOINT_SMS_VOICE_V2,
  async start(context) {
    const storeFile = join(context.dataDir, 'eum-simulator.json');
    const simulator = await startEumSimulator({
      port: servicePort(context.env, 'eum'),
      storeFile,
      region: context.region,
    });
    return {
      env: {
        AWS_ENDPOINT_URL_PINPOINT_SMS_VOICE_V2: simulator.endpoint,
        EUM_ORIGINATION_IDENTITY: context.env.EUM_ORIGINATION_IDENTITY || 'phone-local0000000000000000000000',
      },
      endpoint: simulator.endpoint,
      describe: `started (EUM SMS simulator; messages: ${simulator.endpoint}/__messages, kept in ${storeFile})`,
      simulator,
      stop: () => simulator.close(),
    };
  },
  feed(context, deliver) {
    const endpoint = context.env.AWS_ENDPOINT_URL_PINPOINT_SMS_VOICE_V2;
    if (!endpoint || !context.started) return undefined;
    const cursorFile = join(context.dataDir, 'eum-feed.json');
    let after = readCursor(cursorFile);
    let running = false;
    let lastReport = 0;
    const pass = async () => {
      const response = await fetch(`${endpoint}/__events?after=${after}`);
      const { events } = (await response.json()) as {
        events: { seq: number; event: Parameters<typeof deliver>[0] }[];
      };
      // In order, each delivered before the cursor moves past it: a kill replays, never skips.
      for (const { seq, event } of events) {
        await deliver(event);
        after = seq;
      }
      if (events.length > 0) {
        await writeFile(`${cursorFile}.tmp`, JSON.stringify({ after }));
        await rename(`${cursorFile}.tmp`, cursorFile);
      }
    };
    const timer = setInterval(() => {
      if (running) return;
      running = true;
      pass()
        .catch((error: unknown) => {
          if (Date.now() - lastReport < 30_000) return;
          lastReport = Date.now();
          context.log(`EUM event feed failed: ${error instanceof Error ? error.message : String(error)}`);
        })
        .finally(() => {
          running = false;
        });
    }, FEED_INTERVAL_MS);
    timer.unref();
    return { stop: () => clearInterval(timer), describe: 'EUM events fed to provider-events' };
  },
};

function readCursor(file: string): number {
  try {
    const after = (JSON.parse(readFileSync(file, 'utf8')) as { after?: unknown }).after;
    return typeof after === 'number' ? after : 0;
  } catch {
    return 0;
  }
}
