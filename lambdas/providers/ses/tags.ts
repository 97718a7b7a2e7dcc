/** How an SES message carries its intent, shared by the transport (sets) and the inbound facet (reads). */

/** EmailTags allow only ASCII letters, digits, `_` and `-`, at most 256 characters. */
export function sesTagValue(value: string): string {
  return value.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 256);
}

/** The tag SES copies into every event (`mail.tags.notice_intent`), tying it to the intent. */
export const SES_INTENT_TAG = 'notice_intent';

/** The same correlation id as a message header. */
export const SES_INTENT_HEADER = 'X-Notice-Intent';
