import { verifyTwilioSignature } from '../../adapters/twilio/twilio-signature.ts';
import { header, readFormBody } from '../../edge/http-body.ts';
import {
  emptyResponse,
  type FieldError,
  invalidRequest,
  ProblemType,
  problem,
  problemResponse,
} from '../../edge/problem.ts';
import { applyDeliveryReport, type DeliveryReport } from '../../use-cases/apply-delivery-report.ts';
import { parseCorrelationId } from '../../use-cases/deliver-intent.ts';
import { logger } from '../observability.ts';
import type { HttpRequest, HttpRuntime, RouteReply } from './router.ts';

/**
 * Twilio `MessageStatus` → what it proves about the intent. Statuses that prove nothing we
 * record (`receiving`, `canceled`, …) are acknowledged and ignored.
 * - `accepted`/`queued`/`scheduled`/`sending`/`sent`: Twilio holds the message, which settles a
 *   row still `sending` or `unknown` as accepted;
 * - `delivered` (and `read`, which implies it): final delivery;
 * - `undelivered`/`failed`: final failure, with Twilio's ErrorCode.
 */
const STATUS_KIND: Readonly<Record<string, DeliveryReport['kind']>> = {
  accepted: 'accepted',
  queued: 'accepted',
  scheduled: 'accepted',
  sending: 'accepted',
  sent: 'accepted',
  delivered: 'delivered',
  read: 'delivered',
  undelivered: 'failed',
  failed: 'failed',
};

/**
 * Error codes that mean the destination should not be messaged again on this channel:
 * 21610 the recipient replied STOP (an opt-out: treated like a complaint), 30004 blocked,
 * 30005 unknown or inactive number and 30006 landline or unreachable carrier (hard bounces).
 * Other codes (30003 handset off, 30007 carrier filtering, …) fail this message only.
 */
const SUPPRESSING_CODES: Readonly<Record<string, NonNullable<DeliveryReport['failure']>>> = {
  '21610': 'complaint',
  '30004': 'delivery_failed',
  '30005': 'hard_bounce',
  '30006': 'hard_bounce',
};

const MESSAGE_SID = /^[A-Z]{2}[0-9a-fA-F]{32}$/;

export type TwilioCallback =
  | { readonly ok: true; readonly report: DeliveryReport | undefined; readonly status: string }
  | { readonly ok: false; readonly errors: readonly FieldError[] };

/**
 * A verified callback → a delivery report (`undefined` for a status we ignore). The intent comes
 * from `?ref=<noticeId>-sms`, which our transport adds to the StatusCallback URL and Twilio signs.
 */
export function twilioCallbackReport(
  params: Readonly<Record<string, string>>,
  rawQueryString: string,
  at: number,
): TwilioCallback {
  const errors: FieldError[] = [];
  const ref = parseCorrelationId(new URLSearchParams(rawQueryString).get('ref') ?? '');
  if (ref?.channel !== 'sms') {
    errors.push({
      path: 'ref',
      code: 'invalid_format',
      message: 'query parameter ref must be <noticeId>-sms',
    });
  }
  const receiptId = params.MessageSid ?? params.SmsSid ?? '';
  if (!MESSAGE_SID.test(receiptId)) {
    errors.push({ path: 'MessageSid', code: 'required', message: 'must be a Twilio message SID' });
  }
  const status = (params.MessageStatus ?? params.SmsStatus ?? '').toLowerCase();
  if (status === '') errors.push({ path: 'MessageStatus', code: 'required', message: 'is required' });
  if (!ref || errors.length > 0) return { ok: false, errors };

  const kind = STATUS_KIND[status];
  if (!kind) return { ok: true, report: undefined, status };
  const code = /^\d{1,10}$/.test(params.ErrorCode ?? '') ? params.ErrorCode : undefined;
  const suppressing = kind === 'failed' && code !== undefined ? SUPPRESSING_CODES[code] : undefined;
  return {
    ok: true,
    status,
    report: {
      ref,
      provider: 'twilio',
      receiptId,
      kind,
      at,
      ...(kind === 'failed'
        ? { failure: suppressing ?? 'delivery_failed', code, suppress: suppressing !== undefined }
        : {}),
    },
  };
}

const forbidden = () =>
  problemResponse(
    problem(403, ProblemType.invalidSignature, {
      detail: 'X-Twilio-Signature does not verify for this request',
    }),
  );

/**
 * `POST /v1/provider-events/twilio`. The signature covers the exact URL Twilio called (our
 * public origin + path + query, which carries `ref`) and every form parameter. Anything that
 * does not verify is a 403 and changes nothing, including when no Twilio credentials are
 * configured. Verified callbacks are answered 200 whatever the ledger made of them (an unknown
 * intent too): a non-2xx would only make Twilio retry something that cannot succeed.
 */
export async function twilioStatusRoute(request: HttpRequest, runtime: HttpRuntime): Promise<RouteReply> {
  const { event } = request;
  const form = readFormBody(event);
  if (!form.ok) return { response: problemResponse(form.problem) };
  if (!runtime.twilio || !runtime.publicBaseUrl) {
    logger.warn('twilio callback refused: no Twilio credentials or PUBLIC_BASE_URL configured');
    return { response: forbidden() };
  }
  const query = event.rawQueryString ?? '';
  const url = `${runtime.publicBaseUrl}${event.rawPath}${query ? `?${query}` : ''}`;
  if (
    !verifyTwilioSignature(runtime.twilio.authToken, header(event, 'x-twilio-signature'), url, form.value)
  ) {
    return { response: forbidden(), log: { signature: 'invalid' } };
  }

  const callback = twilioCallbackReport(form.value, query, runtime.deps.clock.now());
  if (!callback.ok) return { response: problemResponse(invalidRequest(callback.errors)) };
  const { report } = callback;
  if (!report)
    return { response: emptyResponse(200), log: { providerStatus: callback.status, result: 'ignored' } };
  const result = await applyDeliveryReport(report, runtime.deps);
  return {
    response: emptyResponse(200),
    noticeId: report.ref.noticeId,
    log: {
      providerStatus: callback.status,
      errorCode: report.code,
      result: result.kind,
      ...(result.kind === 'applied' ? { state: result.state } : { why: result.why }),
    },
  };
}
