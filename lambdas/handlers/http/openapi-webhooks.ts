import type { WebhookParameter } from '../../contract/providers.ts';
import { providerEventsPath } from '../../contract/routes.ts';
import { BodyLimits } from '../../edge/http-body.ts';
import { PROVIDERS } from '../../providers/registry.ts';

/** A reference to a component schema of the document (./openapi.ts). */
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** An answer whose body is an RFC 9457 problem. */
export const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ref('Problem') } },
});

/**
 * 503 (lambdas/handlers/http/route.ts `failureAnswer`): DynamoDB refused the request for capacity
 * after the SDK's retries; the same request may be sent again after Retry-After.
 */
export const overCapacity = {
  ...problem(
    'capacity-exceeded: the ledger is over its provisioned capacity for a moment (a burst above what auto scaling has reached); nothing is recorded by the failed step, send the same request again after Retry-After',
  ),
  headers: {
    'Retry-After': {
      description: 'seconds to wait before sending the same request again',
      schema: { type: 'integer' },
    },
  },
};

/**
 * One operation per registered provider with a webhook, from its descriptor
 * (lambdas/providers/<id>/descriptor.ts): the path, the media type, the headers every delivery
 * carries, what the provider posts, and every answer the provider-events function gives it.
 */
export function providerEventPaths(): Record<string, unknown> {
  return Object.fromEntries(
    PROVIDERS.flatMap(({ descriptor }) => {
      const webhook = descriptor.inbound === 'webhook' ? descriptor.webhook : undefined;
      if (!webhook) return [];
      const parameter = (where: 'header' | 'query', required: boolean) => (p: WebhookParameter) => ({
        name: p.name,
        in: where,
        required,
        description: p.description,
        schema: { type: 'string', ...(p.pattern ? { pattern: p.pattern } : {}) },
      });
      const headerNames = webhook.headers.map((h) => h.name).join(', ');
      const unsigned = `${headerNames} missing: nothing changes`;
      const refused = `the signature does not verify${webhook.refusedAlso ? `, or it was ${webhook.refusedAlso}` : ''}: nothing changes`;
      const refusals =
        webhook.unsignedStatus === webhook.refusedStatus
          ? { [webhook.refusedStatus]: problem(`invalid-signature: ${unsigned}; ${refused}`) }
          : {
              [webhook.unsignedStatus]: problem(`invalid-signature: ${unsigned}`),
              [webhook.refusedStatus]: problem(`invalid-signature: ${refused}`),
            };
      const operation = {
        operationId: `${descriptor.id}ProviderEvents`,
        summary: webhook.summary,
        security: [],
        parameters: [
          ...webhook.headers.map(parameter('header', true)),
          ...(webhook.query ?? []).map(parameter('query', false)),
        ],
        requestBody: { required: true, content: { [webhook.contentType]: { schema: webhook.body } } },
        responses: {
          200: {
            description:
              'verified: recorded, or acknowledged (an event naming no notice of ours, counted; one that says nothing the ledger records)',
          },
          400: problem(
            'malformed-body: not UTF-8 (invalid_utf8) or not canonical base64; invalid-request: verified, but not JSON (invalid_json) or without a field it must carry (`errors` names it by path); nothing changes',
          ),
          ...refusals,
          404: problem(
            `no such resource: this deployment takes no events from ${descriptor.title} (neither selected nor retained, or its secret still holds placeholders)`,
          ),
          413: problem(`body over ${BodyLimits.formMaxBytes} bytes`),
          415: problem(`not ${webhook.contentType}`),
          500: problem(
            'the ledger could not be written: nothing is acknowledged, and the provider’s retry is welcome',
          ),
          503: overCapacity,
        },
      };
      return [[providerEventsPath(descriptor.id), { post: operation }]];
    }),
  );
}
