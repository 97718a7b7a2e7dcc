import { Webhook } from 'standardwebhooks';
import { type OutcomeEvent, webhookPayload } from '../../domain/outcome-event.ts';
import type { WebhookAnswer, WebhookPoster } from '../../ports/outcome-sink.port.ts';

export interface StandardWebhookPosterOptions {
  readonly url: string;
  /** `whsec_…` secrets; each signs (two during a rotation: two signatures, space-separated). */
  readonly secrets: readonly string[];
  readonly timeoutMs: number;
  readonly now?: () => Date;
  readonly fetch?: typeof fetch;
}

/**
 * Standard Webhooks (https://www.standardwebhooks.com): `webhook-id` the event's id (the same on
 * every retry), `webhook-timestamp` this attempt's time in seconds, `webhook-signature`
 * `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` per secret; body `{type, timestamp, data}`.
 * Signed with the Standard Webhooks library itself, so receivers verify with theirs.
 */
export class StandardWebhookPoster implements WebhookPoster {
  private readonly signers: readonly Webhook[];

  constructor(private readonly options: StandardWebhookPosterOptions) {
    if (options.secrets.length === 0) throw new Error('a webhook needs at least one signing secret');
    this.signers = options.secrets.map((secret) => new Webhook(secret));
  }

  /** The request of one attempt: headers and body (exported for tests of the exact bytes). */
  request(event: OutcomeEvent): { headers: Record<string, string>; body: string } {
    const body = JSON.stringify(webhookPayload(event));
    const at = this.options.now?.() ?? new Date();
    // The library signs with the timestamp's whole seconds; the header carries the same.
    const timestamp = Math.floor(at.getTime() / 1000);
    const signatures = this.signers.map((signer) => signer.sign(event.id, at, body));
    return {
      headers: {
        'content-type': 'application/json',
        'webhook-id': event.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatures.join(' '),
      },
      body,
    };
  }

  async post(event: OutcomeEvent): Promise<WebhookAnswer> {
    const { headers, body } = this.request(event);
    try {
      const response = await (this.options.fetch ?? fetch)(this.options.url, {
        method: 'POST',
        headers,
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      // The answer's body is the receiver's business; read and dropped so the connection is reused.
      await response.arrayBuffer().catch(() => undefined);
      const { status } = response;
      return status >= 200 && status < 300 ? { kind: 'delivered', status } : { kind: 'refused', status };
    } catch (error) {
      const name = error instanceof Error ? error.name : 'Error';
      return { kind: 'unreachable', code: name === 'TimeoutError' ? 'timeout' : name };
    }
  }
}
