/** How a text message carries its intent, shared by the transport (sets) and the inbound facet (reads). */

/**
 * The `Context` key of every message: the service copies `Context` into each of the message's
 * events, which is how an event finds its intent (even after a timeout that left no MessageId).
 */
export const EUM_INTENT_CONTEXT_KEY = 'notice_intent';

/** EventBridge: where the service publishes text message events. */
export const EUM_EVENT_SOURCE = 'aws.sms-voice';
export const EUM_TEXT_EVENT_DETAIL_TYPE = 'Text Message Delivery Status Updated';
