/**
 * SQS keeps a message it acknowledged until it is deleted; local-aws-sqs keeps it in memory only
 * (local/services/sqs.ts), which the channel queues can live with (the reconciler re-enqueues from
 * the ledger) but the webhook queue cannot: an event it held when the stack was killed would be
 * owed forever, since the stream consumer had moved past it. So the local stack journals that one
 * queue: every message SQS accepted (`sent`) and every one deleted (`done`), appended to a file in
 * the data dir before the call returns; `replay` sends again what was sent and never deleted.
 * A plugin on the clients of the two functions that use the queue, beside local IAM's.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { AwsClientPlugin } from '../lambdas/ports/provider.port.ts';

interface MiddlewareStack {
  add(
    middleware: (next: Handler, context: { commandName?: string }) => Handler,
    options: { step: 'initialize'; name: string; priority: 'low' },
  ): void;
}
type Handler = (args: { input: unknown }) => Promise<{ output: unknown }>;

type Entry = { readonly sent: string; readonly body: string } | { readonly done: string };
type Input = Record<string, unknown>;

export interface SqsJournal {
  readonly plugin: AwsClientPlugin;
  /** Sends again every message sent and never deleted (after a crash); answers how many. */
  replay(client: SQSClient): Promise<number>;
}

export function sqsJournal(file: string, queueUrl: () => string | undefined): SqsJournal {
  const receipts = new Map<string, string>();
  const write = (entries: readonly Entry[]) => {
    if (entries.length > 0) appendFileSync(file, entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
  };
  const middleware =
    (next: Handler, context: { commandName?: string }): Handler =>
    async (args) => {
      const input = (args.input ?? {}) as Input;
      const result = await next(args);
      if (!queueUrl() || input.QueueUrl !== queueUrl()) return result;
      const output = (result.output ?? {}) as Input;
      switch (context.commandName) {
        case 'SendMessageCommand':
          if (typeof output.MessageId === 'string')
            write([{ sent: output.MessageId, body: String(input.MessageBody) }]);
          break;
        case 'SendMessageBatchCommand': {
          const bodies = new Map(
            ((input.Entries ?? []) as { Id: string; MessageBody: string }[]).map((e) => [
              e.Id,
              e.MessageBody,
            ]),
          );
          write(
            ((output.Successful ?? []) as { Id: string; MessageId: string }[]).map((s) => ({
              sent: s.MessageId,
              body: bodies.get(s.Id) ?? '',
            })),
          );
          break;
        }
        case 'ReceiveMessageCommand':
          for (const m of (output.Messages ?? []) as { MessageId: string; ReceiptHandle: string }[])
            receipts.set(m.ReceiptHandle, m.MessageId);
          break;
        case 'DeleteMessageCommand': {
          const id = receipts.get(String(input.ReceiptHandle));
          if (id) write([{ done: id }]);
          receipts.delete(String(input.ReceiptHandle));
          break;
        }
        case 'DeleteMessageBatchCommand': {
          const handles = new Map(
            ((input.Entries ?? []) as { Id: string; ReceiptHandle: string }[]).map((e) => [
              e.Id,
              e.ReceiptHandle,
            ]),
          );
          const done: Entry[] = [];
          for (const s of (output.Successful ?? []) as { Id: string }[]) {
            const handle = handles.get(s.Id) ?? '';
            const id = receipts.get(handle);
            if (id) done.push({ done: id });
            receipts.delete(handle);
          }
          write(done);
          break;
        }
      }
      return result;
    };

  return {
    plugin: {
      applyToStack(stack) {
        (stack as MiddlewareStack).add(middleware, {
          step: 'initialize',
          name: 'localSqsJournal',
          priority: 'low',
        });
      },
    },
    async replay(client) {
      let text = '';
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        return 0;
      }
      const owed = new Map<string, string>();
      for (const line of text.split('\n')) {
        let entry: Entry;
        try {
          entry = JSON.parse(line) as Entry;
        } catch {
          continue; // A line cut short by a kill -9.
        }
        if ('sent' in entry) owed.set(entry.sent, entry.body);
        else owed.delete(entry.done);
      }
      // The journal starts again with what is replayed (journaled anew as it is sent).
      writeFileSync(file, '');
      const url = queueUrl();
      if (!url) return 0;
      for (const body of owed.values()) {
        await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body }));
      }
      return owed.size;
    },
  };
}
