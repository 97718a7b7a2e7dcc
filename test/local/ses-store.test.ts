/**
 * The stack's own aws-ses-v2-local keeps what it accepted in the data dir: after a restart (even
 * after a kill -9) the sent mail can still be counted and the SES event feed still sees it.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../local/process-utils.ts';
import { startSesEventFeeder } from '../../local/ses/event-feeder.ts';
import { clearSesStore, readSesStore, startSesLocal } from '../../local/ses/server.ts';

describe('SES emulator store', () => {
  it('is written before the answer, reloaded at start, on the port asked for, and emptied with the store', async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), 'ses-store-'));
    const storeFile = join(dir, 'ses-store.jsonl');
    const port = await freePort();
    const first = await startSesLocal({ port, storeFile });
    await clearSesStore(first.endpoint);
    const client = new SESv2Client({
      endpoint: first.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
    });
    const send = (to: string) =>
      client.send(
        new SendEmailCommand({
          FromEmailAddress: 'notices@example.com',
          Destination: { ToAddresses: [to] },
          Content: { Simple: { Subject: { Data: 's' }, Body: { Text: { Data: 't' } } } },
        }),
      );
    const ids = [(await send('a@example.com')).MessageId, (await send('b@example.com')).MessageId];
    // Written by the time the answer arrived.
    const onDisk = (await readFile(storeFile, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).messageId);

    // Act: the module-global store is lost with the process; a restart reloads the file.
    await first.close();
    await clearSesStore(first.endpoint).catch(() => undefined);
    const emptied = (await import('aws-ses-v2-local/dist/store.js')) as { clearStore(): void };
    emptied.clearStore();
    const second = await startSesLocal({ port, storeFile });

    // Assess
    try {
      expect(onDisk).toEqual(ids);
      expect(second.port).toBe(port);
      expect((await readSesStore(second.endpoint)).map((e) => e.messageId)).toEqual(ids);
      await clearSesStore(second.endpoint);
      expect((await readFile(storeFile, 'utf8')).trim()).toBe('');
    } finally {
      client.destroy();
      await second.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('the event feed writes its cursor after handling and starts from it (without one: the whole store again)', async () => {
    // Prepare: one mail in the store, fed once.
    const dir = await mkdtemp(join(tmpdir(), 'ses-feed-'));
    const cursorFile = join(dir, 'ses-feed.json');
    const ses = await startSesLocal({ port: 0, storeFile: join(dir, 'ses-store.jsonl') });
    await clearSesStore(ses.endpoint);
    const client = new SESv2Client({
      endpoint: ses.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
    });
    await client.send(
      new SendEmailCommand({
        FromEmailAddress: 'notices@example.com',
        Destination: { ToAddresses: ['a@example.com'] },
        Content: { Simple: { Subject: { Data: 's' }, Body: { Text: { Data: 't' } } } },
      }),
    );
    const [mail] = await readSesStore(ses.endpoint);
    const delivered: string[] = [];
    const deliver = async (event: { 'detail-type': string }) => {
      delivered.push(event['detail-type']);
    };
    const first = startSesEventFeeder({ endpoint: ses.endpoint, deliver, cursorFile, intervalMs: 60_000 });

    try {
      // Act
      const handledFirst = await first.poll();
      first.stop();
      const cursor = JSON.parse(await readFile(cursorFile, 'utf8'));
      // A restart a second later: the store's filter re-reads the cursor's second, so move it on.
      await writeFile(cursorFile, JSON.stringify({ since: (mail?.at ?? 0) + 1 }));
      const second = startSesEventFeeder({ endpoint: ses.endpoint, deliver, cursorFile, intervalMs: 60_000 });
      const handledSecond = await second.poll();
      second.stop();
      const third = startSesEventFeeder({ endpoint: ses.endpoint, deliver, intervalMs: 60_000 });
      const handledWithout = await third.poll();
      third.stop();

      // Assess
      expect(handledFirst).toBe(1);
      expect(cursor).toEqual({ since: mail?.at });
      expect(handledSecond).toBe(0);
      expect(handledWithout).toBe(1); // no cursor: the whole store again (safe, every event is idempotent)
      expect(delivered).toEqual(['Email Delivered', 'Email Delivered']); // no Send: the configuration set publishes none
    } finally {
      client.destroy();
      await ses.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
