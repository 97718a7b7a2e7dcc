/** Delivery channels. One ledger row (intent) exists per (noticeId, channel). */
export const Channel = {
  email: 'email',
  sms: 'sms',
} as const;

export type Channel = (typeof Channel)[keyof typeof Channel];

export const CHANNELS: readonly Channel[] = [Channel.email, Channel.sms];

export function isChannel(value: string): value is Channel {
  return (CHANNELS as readonly string[]).includes(value);
}
