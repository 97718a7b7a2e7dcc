import { z } from 'zod';

const ms = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const optionalText = z
  .string()
  .trim()
  .optional()
  .transform((v) => (v === '' ? undefined : v));

/**
 * Runtime configuration, read once per process from the environment. The names are the
 * contract of DESIGN §6: the local stack and the CDK stack set the same variables.
 */
export const ConfigSchema = z.object({
  LEDGER_TABLE_NAME: z.string().min(1).default('notice-ledger'),
  EMAIL_QUEUE_URL: optionalText,
  SMS_QUEUE_URL: optionalText,
  EMAIL_PROVIDER: z.enum(['ses']).default('ses'),
  SMS_PROVIDER: z.enum(['twilio']).default('twilio'),

  SES_FROM_ADDRESS: z.string().min(3).default('notices@example.com'),
  SES_CONFIGURATION_SET: optionalText,

  TWILIO_BASE_URL: z.string().url().default('https://api.twilio.com'),
  TWILIO_ACCOUNT_SID: optionalText,
  TWILIO_AUTH_TOKEN: optionalText,
  TWILIO_FROM: optionalText,
  /** AWS: Secrets Manager secret holding `{ accountSid, authToken, from }`; wins over the plain variables. */
  TWILIO_SECRET_ARN: optionalText,
  PUBLIC_BASE_URL: optionalText,

  PROVIDER_TIMEOUT_MS: ms(10_000),
  SEND_LEASE_MS: ms(60_000),
  RECONCILE_INTERVAL_MS: ms(60_000),
  UNKNOWN_GRACE_MS: ms(600_000),
  /** What to do with an `unknown` row the provider could not settle within UNKNOWN_GRACE_MS. */
  UNKNOWN_POLICY: z.enum(['escalate', 'resend']).default('escalate'),
  RETRY_BASE_MS: ms(1_000),
  RETRY_CAP_MS: ms(900_000),
  MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(8),
  NOTICE_DEFAULT_DEADLINE_MS: ms(86_400_000),

  /** Base64 of 32 bytes. Local stack only; in AWS the key comes from Secrets Manager. */
  FINGERPRINT_KEY: optionalText,
  FINGERPRINT_KEY_SECRET_ARN: optionalText,
  /** Base64 of 32 bytes: local AES-256-GCM key for send envelopes. */
  ENVELOPE_LOCAL_KEY: optionalText,
  /** AWS: KMS key (id or ARN) that wraps the envelope data keys. Wins over the local key. */
  ENVELOPE_KMS_KEY_ID: optionalText,

  SCHEDULE_GROUP_NAME: z.string().default('notice-ledger-retries'),
  SCHEDULER_ROLE_ARN: optionalText,
  EMAIL_QUEUE_ARN: optionalText,
  SMS_QUEUE_ARN: optionalText,
  /** EventBridge bus for escalation events; absent → escalations are only logged. */
  ESCALATION_EVENT_BUS: optionalText,

  /**
   * Known provider rate for this process (sends/s); absent = no pacing, the shared throttle
   * gate still applies. In AWS the stack sets `rate / maximum concurrency` per sender.
   */
  EMAIL_SEND_RATE_PER_SECOND: z.coerce.number().positive().optional(),
  SMS_SEND_RATE_PER_SECOND: z.coerce.number().positive().optional(),

  OPEN_INDEX_SHARDS: z.coerce.number().int().min(1).max(64).default(4),
  RETENTION_DAYS: z.coerce.number().int().positive().optional(),
});

export type Config = z.infer<typeof ConfigSchema>;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export function readConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
    throw new ConfigError(`invalid configuration: ${fields}`);
  }
  return parsed.data;
}
