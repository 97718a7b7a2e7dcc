import { channelSenderHandler } from './channel-sender.ts';

export const handler = channelSenderHandler('sms');
