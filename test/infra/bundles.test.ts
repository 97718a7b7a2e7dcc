/**
 * Each function's bundle carries only what it uses: built with the very options the stack gives
 * NodejsFunction (lib/constructs/bundling.ts) and the stack's own selection per function
 * (`bundleSelection`), then read back from esbuild's metafile: which AWS SDK clients, which
 * provider files. The sizes are printed for the record.
 */
import { build, type Metafile } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTION_NAMES, type FunctionName } from '../../lambdas/contract/functions.ts';
import { readConfig } from '../../lib/config.ts';
import { esbuildOptions } from '../../lib/constructs/bundling.ts';
import { REGISTERED_PROVIDER_IDS } from '../../lib/providers/registry.ts';
import { bundleSelection } from '../../lib/stacks/delivery-stack.ts';

interface Bundle {
  readonly bytes: number;
  readonly clients: string[];
  /** Files under lambdas/providers/ (without the prefix). */
  readonly providerFiles: string[];
  /** AWS SDK commands in the output, as `client-x/CommandName`. */
  readonly commands: string[];
}

/**
 * What the output really contains: the inputs of the `.mjs` output with bytes in it (a module
 * esbuild parsed but tree-shook away entirely is listed in `meta.inputs`, not here).
 */
function summarise(meta: Metafile, bytes: number): Bundle {
  const output = Object.entries(meta.outputs).find(([path]) => path.endsWith('.mjs'))?.[1];
  const inputs = Object.entries(output?.inputs ?? {})
    .filter(([, input]) => input.bytesInOutput > 0)
    .map(([path]) => path);
  const clients = new Set(
    inputs.flatMap((path) => {
      const m = /node_modules\/@aws-sdk\/(client-[a-z0-9-]+)\//.exec(path);
      return m ? [m[1] as string] : [];
    }),
  );
  return {
    bytes,
    clients: [...clients].sort(),
    providerFiles: inputs
      .filter((path) => path.startsWith('lambdas/providers/'))
      .map((path) => path.slice('lambdas/providers/'.length))
      .sort(),
    commands: inputs
      .flatMap((path) => {
        const m = /node_modules\/@aws-sdk\/(client-[a-z0-9-]+)\/dist-es\/commands\/(\w+)Command\.js$/.exec(
          path,
        );
        return m ? [`${m[1]}/${m[2]}`] : [];
      })
      .sort(),
  };
}

async function bundle(
  name: FunctionName,
  providers = readConfig({}).providers,
  omit = true,
): Promise<Bundle> {
  const selection = bundleSelection(name, providers);
  const options = esbuildOptions(name, selection, REGISTERED_PROVIDER_IDS);
  const result = await build(omit ? options : { ...options, define: {} });
  const js = result.outputFiles.find((f) => f.path.endsWith('.mjs'));
  return summarise(result.metafile, js?.contents.byteLength ?? 0);
}

const bundles = new Map<FunctionName, Bundle>();

beforeAll(async () => {
  for (const name of FUNCTION_NAMES) bundles.set(name, await bundle(name));
  const table = FUNCTION_NAMES.map((name) => {
    const b = bundles.get(name) as Bundle;
    return `  ${name.padEnd(15)} ${(b.bytes / 1_048_576).toFixed(3)} MiB  ${b.clients.join(', ')}`;
  });
  console.info(`bundles (default deployment: ses + twilio):\n${table.join('\n')}`);
}, 120_000);

const CORE = ['client-dynamodb', 'client-sqs', 'client-kms'];
const WORKER = [...CORE, 'client-scheduler', 'client-eventbridge'];

describe('each function bundles only its own clients and provider code', () => {
  it('http (intake): ledger, queues, envelope sealing, the fingerprint secret, the deadline-risk escalations, the archive; no provider code at all', () => {
    const b = bundles.get('http') as Bundle;
    // EventBridge: a deadline-risk warning is published from intake (docs/architecture.md §11).
    // S3: a timeline past the hot window is read from the archive's rows/ (docs/archive.md).
    expect(b.clients).toEqual([...CORE, 'client-secrets-manager', 'client-eventbridge', 'client-s3'].sort());
    expect(b.providerFiles).toEqual([]);
  });

  it('send-email (SES): the SES client and transport, no secrets, nothing of Twilio but its descriptor', () => {
    const b = bundles.get('sendEmail') as Bundle;
    expect(b.clients).toEqual([...WORKER, 'client-sesv2'].sort());
    expect(b.providerFiles.filter((f) => !f.endsWith('descriptor.ts'))).toEqual([
      'aws-sdk-send.ts',
      'registry.ts',
      'ses/index.ts',
      'ses/tags.ts',
      'ses/transport.ts',
      'settings.ts',
    ]);
    // Tree shaking reaches into the client: the one command the transport sends, not all of them.
    expect(b.commands.filter((c) => c.startsWith('client-sesv2/'))).toEqual(['client-sesv2/SendEmail']);
  });

  it('send-sms (Twilio): its transport and credentials secret, no SES client, no lookup or webhook code', () => {
    const b = bundles.get('sendSms') as Bundle;
    expect(b.clients).toEqual([...WORKER, 'client-secrets-manager'].sort());
    expect(b.providerFiles.filter((f) => f.startsWith('twilio/')).sort()).toEqual([
      'twilio/api.ts',
      'twilio/callbacks.ts',
      'twilio/descriptor.ts',
      'twilio/index.ts',
      'twilio/transport.ts',
    ]);
    expect(b.providerFiles.some((f) => f.startsWith('ses/') && !f.endsWith('descriptor.ts'))).toBe(false);
  });

  it('reconciler: the lookups only (Twilio has one, SES none): no transport, no SES client', () => {
    const b = bundles.get('reconciler') as Bundle;
    expect(b.clients).toEqual([...WORKER, 'client-secrets-manager'].sort());
    expect(b.providerFiles.filter((f) => /(transport|inbound)\.ts$/.test(f))).toEqual([]);
    expect(b.providerFiles).toContain('twilio/lookup.ts');
    // Delivery follow-up: Twilio's status facet (fetch by SID), without its webhook code.
    expect(b.providerFiles).toContain('twilio/status.ts');
  });

  it('provider-events: the ledger and the inbound facets only', () => {
    const b = bundles.get('providerEvents') as Bundle;
    expect(b.clients).toEqual(['client-dynamodb', 'client-secrets-manager']);
    expect(b.providerFiles.filter((f) => /(transport|lookup|messages-api)\.ts$/.test(f))).toEqual([]);
    expect(b.providerFiles).toEqual(expect.arrayContaining(['ses/inbound.ts', 'twilio/inbound.ts']));
  });

  it('the switches are what leaves code out: without them every client and provider is bundled', async () => {
    const all = await bundle('sendEmail', readConfig({}).providers, false);
    expect(all.clients).toEqual(expect.arrayContaining(['client-sesv2', 'client-secrets-manager']));
    expect(all.providerFiles).toEqual(expect.arrayContaining(['twilio/transport.ts', 'ses/inbound.ts']));
  });

  it('a retained provider is bundled into the reconciler and provider-events, never into a sender', async () => {
    // SES kept for its open rows while (hypothetically) sms moves on: here SES retained alone.
    const providers = { email: 'ses', sms: 'twilio', retained: [], fallbacks: {} };
    expect(
      (await bundle('sendSms', providers)).providerFiles.some(
        (f) => f.startsWith('ses/') && !f.endsWith('descriptor.ts'),
      ),
    ).toBe(false);
    expect(bundleSelection('reconciler', { ...providers, retained: ['ses'] }).providers).toEqual([
      'ses',
      'twilio',
    ]);
  });

  it('a fallback provider is selected, not retained: the sender carries both transports', () => {
    const providers = { email: 'ses', sms: 'twilio', retained: [], fallbacks: { sms: 'eum' } };
    expect(bundleSelection('sendSms', providers)).toMatchObject({
      providers: ['twilio', 'eum'],
      secrets: true,
    });
    expect(bundleSelection('sendEmail', providers).providers).toEqual(['ses']);
    expect([...bundleSelection('reconciler', providers).providers].sort()).toEqual(['eum', 'ses', 'twilio']);
  });

  it('send-sms (EUM): the SMS v2 client with only the commands its transport sends, no secret', async () => {
    const b = await bundle('sendSms', { email: 'ses', sms: 'eum', retained: [], fallbacks: {} });
    expect(b.clients).toEqual([...WORKER, 'client-pinpoint-sms-voice-v2'].sort());
    expect(b.commands.filter((c) => c.startsWith('client-pinpoint-sms-voice-v2/')).sort()).toEqual([
      'client-pinpoint-sms-voice-v2/PutOptedOutNumber',
      'client-pinpoint-sms-voice-v2/SendTextMessage',
    ]);
    expect(b.providerFiles.filter((f) => f.startsWith('eum/')).sort()).toEqual([
      'eum/descriptor.ts',
      'eum/index.ts',
      'eum/transport.ts',
    ]);
  });

  it('infrai on both channels: senders carry its transport, the reconciler its lookup and pulled events', async () => {
    const providers = { email: 'infrai', sms: 'infrai', retained: [], fallbacks: {} };
    const sender = await bundle('sendEmail', providers);
    expect(sender.clients).toEqual([...WORKER, 'client-secrets-manager'].sort());
    expect(sender.providerFiles.filter((f) => f.startsWith('infrai/')).sort()).toEqual([
      'infrai/api.ts',
      'infrai/descriptor.ts',
      'infrai/index.ts',
      'infrai/transport.ts',
    ]);
    const reconciler = await bundle('reconciler', providers);
    expect(reconciler.providerFiles).toEqual(
      expect.arrayContaining(['infrai/lookup.ts', 'infrai/status.ts']),
    );
    // No inbound facet: provider-events carries its module's index only (no facet code).
    const events = await bundle('providerEvents', providers);
    expect(events.providerFiles.filter((f) => f.startsWith('infrai/')).sort()).toEqual([
      'infrai/descriptor.ts',
      'infrai/index.ts',
    ]);
  });
});
