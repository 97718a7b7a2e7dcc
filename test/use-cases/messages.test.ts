/**
 * A replay under an idempotency key must be byte for byte the first attempt (a provider that
 * compares bodies answers a changed one with 409 `invalid_idempotent_request`). The ledger keeps
 * no copy of the body: it keeps the sealed envelope and re-renders. These tests hold that
 * re-rendering to "the same bytes": for every released template, variables of every shape its
 * contract allows, the message built by the sender, by the reconciler (from a freshly opened
 * envelope, in another process's order of events) and from a batch record are identical, and so
 * is the provider request body built from them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AesGcmEnvelopeSealer,
  StaticDataKeySource,
} from '../../lambdas/adapters/crypto/aes-gcm-envelope-sealer.ts';
import { MemoryLedgerStore } from '../../lambdas/adapters/memory/memory-ledger-store.ts';
import type { TemplateDefinition } from '../../lambdas/domain/template.ts';
import type { EmailMessage } from '../../lambdas/ports/transport.port.ts';
import { batchBody, sendBody } from '../../lambdas/providers/resend/api.ts';
import { batchContextOf } from '../../lambdas/use-cases/batch-lookup.ts';
import { renderMessage } from '../../lambdas/use-cases/messages.ts';
import { templateCatalog } from '../../templates/catalog.ts';
import { newIntent } from '../helpers/factories.ts';

const sealer = new AesGcmEnvelopeSealer(new StaticDataKeySource(new Uint8Array(32).fill(3)));
const FROM = 'Clinic <notices@example.com>';

/** Variables a template's contract accepts, drawn from the contract itself. */
function variablesFor(template: TemplateDefinition) {
  const entries = Object.entries(template.variables).map(([name, spec]) => {
    const value =
      spec.type === 'https_url'
        ? fc.webPath().map((p) => `https://portal.example.com${p.replace(/[^A-Za-z0-9/_-]/g, '')}`)
        : spec.type === 'date'
          ? fc
              .date({ min: new Date('2026-01-01'), max: new Date('2030-01-01'), noInvalidDate: true })
              .map((d) => d.toISOString())
          : fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim() === s && s.trim() !== '');
    return [name, spec.required ? value : fc.option(value, { nil: undefined })] as const;
  });
  return fc
    .record(Object.fromEntries(entries))
    .map((v) => Object.fromEntries(Object.entries(v).filter(([, value]) => value !== undefined)));
}

describe('rendering is deterministic: a replay is the first attempt, byte for byte', () => {
  for (const template of templateCatalog.list()) {
    if (!template.email) continue;
    it(`${template.id} ${template.version}: sender, reconciler and batch record build the same message and body`, async () => {
      await fc.assert(
        fc.asyncProperty(variablesFor(template), fc.emailAddress(), async (variables, destination) => {
          const row = { ...newIntent(), templateId: template.id, templateVersion: template.version };
          const binding = { noticeId: row.noticeId, channel: row.channel };
          const sealed = await sealer.seal({ destination, variables }, binding);
          // The sender: opens the row's envelope and renders.
          const atSend = renderMessage(row, template, await sealer.open(sealed, binding)) as EmailMessage;
          // The reconciler, later: opens the same envelope again and renders again.
          const atLookup = renderMessage(row, template, await sealer.open(sealed, binding)) as EmailMessage;
          expect(atLookup).toEqual(atSend);
          expect(sendBody(atLookup, FROM)).toBe(sendBody(atSend, FROM));

          // A batch: rebuilt from its record (copies of the members' envelopes), same bytes.
          const store = new MemoryLedgerStore();
          const other = newIntent();
          const otherSealed = await sealer.seal(
            { destination: 'second@example.com', variables: { firstName: 'Ada' } },
            { noticeId: other.noticeId, channel: 'email' },
          );
          const otherMessage = renderMessage(
            other,
            templateCatalog.lookup('lab-result-ready', 'v3') as TemplateDefinition,
            await sealer.open(otherSealed, { noticeId: other.noticeId, channel: 'email' }),
          ) as EmailMessage;
          await store.recordBatch({
            id: 'bat_test',
            channel: 'email',
            provider: 'resend',
            idempotencyKey: 'batch.bat_test',
            createdAt: 0,
            expiresAt: 1,
            members: [
              {
                noticeId: other.noticeId,
                channel: 'email',
                templateId: 'lab-result-ready',
                templateVersion: 'v3',
                deadline: other.deadline,
                envelope: otherSealed,
              },
              {
                noticeId: row.noticeId,
                channel: 'email',
                templateId: template.id,
                templateVersion: template.version,
                deadline: row.deadline,
                envelope: sealed,
              },
            ],
          });
          const context = await batchContextOf(
            { ...row, batch: 'bat_test' },
            { store, sealer, catalog: templateCatalog },
          );
          expect(context.kind).toBe('batch');
          if (context.kind !== 'batch') return;
          expect(context.batch.index).toBe(1);
          expect(context.batch.messages).toEqual([otherMessage, atSend]);
          expect(batchBody(context.batch.messages, FROM)).toBe(batchBody([otherMessage, atSend], FROM));
        }),
        { numRuns: 40 },
      );
    });
  }

  it('a changed sender or a changed body is a changed request (what Resend would answer with 409)', () => {
    const message: EmailMessage = {
      to: 'a@example.com',
      subject: 's',
      text: 't',
      html: '<p>h</p>',
      correlationId: 'ntc_aaaaaaaaaaaaaaaaaaaaaaaaaa-email',
      idempotencyKey: 'ntc_aaaaaaaaaaaaaaaaaaaaaaaaaa.email',
    };
    expect(sendBody(message, FROM)).not.toBe(sendBody(message, 'Other <x@example.com>'));
    expect(sendBody(message, FROM)).not.toBe(sendBody({ ...message, text: 't ' }, FROM));
  });
});
