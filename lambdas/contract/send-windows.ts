/**
 * The send-window settings (docs/architecture.md §12 "Delivery policies"), kept together so
 * that lambdas/contract/settings.ts lists them in one line. Plain data, like the rest of the
 * contract: the runtime checks a window's form and a zone's name when it reads them
 * (lambdas/wiring/send-windows.ts), refusing to start on a bad one.
 */
export const SEND_WINDOW_SETTINGS = {
  EMAIL_SEND_WINDOW: {
    kind: 'text',
    description:
      "hours of the recipient's local day in which email is sent, HH:MM-HH:MM (08:00-21:00; 21:00-08:00 " +
      'crosses midnight); a standard or bulk notice outside it is held until it opens (reserved, ' +
      'held_for_send_window), a critical one is sent at once (send_window_not_applied); unset: any hour',
  },
  SMS_SEND_WINDOW: {
    kind: 'text',
    description: 'as EMAIL_SEND_WINDOW, for sms (e.g. 08:00-21:00); unset: any hour',
  },
  SEND_WINDOW_TIME_ZONE: {
    kind: 'text',
    default: 'UTC',
    description:
      'IANA zone of a recipient whose request gives no recipient.timeZone (e.g. Europe/Berlin): the ' +
      'zone the send windows are read in for them',
  },
} as const;
