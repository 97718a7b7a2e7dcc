import type { EventBridgeEvent } from 'aws-lambda';
import { mapSesEvent, SesEventSchema } from '../edge/ses-event.ts';
import { applyDeliveryReport } from '../use-cases/apply-delivery-report.ts';
import { getRuntime } from '../wiring.ts';
import { logger, metrics } from './observability.ts';

/**
 * SES configuration-set events from EventBridge. Duplicates and any order are fine (the use
 * case is idempotent); an event we cannot parse is acknowledged and counted, an error
 * reaching the ledger is thrown so EventBridge retries it (then its DLQ).
 */
export async function handler(event: EventBridgeEvent<string, unknown>): Promise<{ result: string }> {
  const parsed = SesEventSchema.safeParse(event);
  if (!parsed.success) {
    logger.warn('unrecognised SES event dropped', { detailType: event['detail-type'], id: event.id });
    metrics.addMetric('UnparsedProviderEvents', 'Count', 1);
    metrics.publishStoredMetrics();
    return { result: 'unparsed' };
  }
  const mapping = mapSesEvent(parsed.data);
  if (mapping.kind === 'ignore') return { result: mapping.why };
  const { deps } = await getRuntime();
  const result = await applyDeliveryReport(mapping.report, deps);
  logger.info('provider event', {
    provider: 'ses',
    eventType: parsed.data.detail.eventType,
    ...mapping.report.ref,
    code: mapping.report.code,
    result,
  });
  return { result: result.kind === 'applied' ? `applied:${result.state}` : `ignored:${result.why}` };
}
