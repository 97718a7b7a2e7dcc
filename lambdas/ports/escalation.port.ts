import type { Channel } from '../domain/channel.ts';

/** A row the system gave up on, or could not decide: a person must look. */
export interface Escalation {
  readonly noticeId: string;
  readonly channel: Channel;
  /**
   * The seq of the record that failed the row, or that escalated its `unknown`: with noticeId and
   * channel, the escalation's identity.
   */
  readonly seq: number;
  /** `unknown_escalated` (the row stays `unknown`, a person must resolve it) or the failure's reason. */
  readonly reason: string;
  readonly state: string;
  readonly at: number;
  readonly detail?: string | undefined;
}

/** Throws when the escalation could not be handed over; the caller keeps it pending. */
export interface EscalationPublisher {
  publish(escalation: Escalation): Promise<void>;
}
