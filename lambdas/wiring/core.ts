import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { ConfigError } from '../contract/config-error.ts';
import { CHANNEL_SETTINGS, NO_PROVIDER } from '../contract/settings.ts';
import { CHANNELS, type Channel } from '../domain/channel.ts';
import type { LedgerTiming } from '../domain/intent.ts';
import type { RetryPolicy } from '../domain/retry-policy.ts';
import type { Config } from '../edge/config.ts';

/** Base64 of exactly 32 bytes (an AES-256 or HMAC-SHA-256 key), or a ConfigError naming `name`. */
export function key32(base64: string, name: string): Uint8Array {
  const key = Buffer.from(base64, 'base64');
  if (key.length !== 32) throw new ConfigError(`${name} must be base64 of 32 bytes`);
  return new Uint8Array(key);
}

export function timingOf(config: Config): LedgerTiming {
  return { leaseMs: config.SEND_LEASE_MS };
}

export function retryPolicyOf(config: Config): RetryPolicy {
  return { baseMs: config.RETRY_BASE_MS, capMs: config.RETRY_CAP_MS, maxAttempts: config.MAX_ATTEMPTS };
}

/** `PUBLIC_BASE_URL` without a trailing slash. */
export function publicBaseUrlOf(config: Config): string | undefined {
  return config.PUBLIC_BASE_URL?.replace(/\/+$/, '');
}

/** Identifies this process in lease records. */
export function workerIdOf(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

/** Whether `<CHANNEL>_PROVIDER` leaves the channel unconfigured (`none`). */
export function channelUnconfigured(
  channel: Channel,
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  return env[CHANNEL_SETTINGS[channel].provider]?.trim() === NO_PROVIDER;
}

/**
 * The channels this deployment sends: those whose provider is not `none`. Read from the variables
 * alone, so the http function (no provider code) knows which channels intake may accept.
 */
export function configuredChannels(env: Readonly<Record<string, string | undefined>>): Channel[] {
  return CHANNELS.filter((channel) => !channelUnconfigured(channel, env));
}
