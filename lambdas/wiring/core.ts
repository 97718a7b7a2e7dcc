import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { ConfigError } from '../contract/config-error.ts';
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
