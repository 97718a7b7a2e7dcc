import type { Channel } from '../domain/channel.ts';
import type { FallbackRequest } from '../domain/fallback.ts';
import type { Priority } from '../domain/priority.ts';

/** A notice request whose shape the edge has already checked (types, lengths, channels, destinations present). */
export interface NoticeRequest {
  readonly eventId: string;
  readonly eventType: string;
  readonly recipient: {
    readonly id: string;
    readonly email?: string | undefined;
    readonly phone?: string | undefined;
    /** IANA zone for send windows; absent → `SEND_WINDOW_TIME_ZONE`. */
    readonly timeZone?: string | undefined;
  };
  readonly channels: readonly Channel[];
  readonly template: { readonly id: string; readonly version: string };
  readonly variables: Readonly<Record<string, unknown>>;
  /** Epoch ms; absent → now + default. */
  readonly deadline?: number | undefined;
  /** The lane (docs/architecture.md §11); absent → the template's, else `standard`. */
  readonly priority?: Priority | undefined;
  /** Channel fallback (docs/architecture.md §12); absent → the template's default where it fits. */
  readonly fallback?: FallbackRequest | undefined;
}

export interface Violation {
  readonly path: string;
  readonly code: string;
  readonly message: string;
}
