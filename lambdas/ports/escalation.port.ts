import type { Channel } from '../domain/channel.ts';

/** A row the system gave up on, or could not decide: a person must look. */
export interface Escalation {
  readonly noticeId: string;
  readonly channel: Channel;
  readonly reason: string;
  readonly state: string;
  readonly at: number;
  readonly detail?: string | undefined;
}

export interface EscalationPublisher {
  publish(escalation: Escalation): Promise<void>;
}
