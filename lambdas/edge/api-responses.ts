import { z } from 'zod';
import { Channel } from '../domain/channel.ts';
import { PRIORITIES, type Priority } from '../domain/priority.ts';
import { IntentState } from '../domain/state-machine.ts';
import { SuppressionAction, SuppressionSource } from '../domain/suppression.ts';
import type { NoticeRequestSchema } from './notice-request.ts';
import { LISTABLE_STATES } from './operator-requests.ts';
import type { SuppressionView } from './suppression-view.ts';
import type { Timeline, TimelineChannel } from './timeline.ts';

/**
 * The response bodies of the HTTP API (docs/architecture.md §6, field names fixed), as zod schemas: the
 * source of their part of `docs/openapi.json`, and what tests validate live answers against.
 * Handlers build these bodies with plain functions (`toTimeline`, `toSuppressionView` …); the type assertions at the
 * end of this file fail the type check when a schema and the type a handler builds drift apart.
 */

const isoTime = () => z.iso.datetime({ offset: true }).meta({ description: 'ISO 8601, UTC' });
const nullable = <T extends z.ZodType>(schema: T) => schema.nullable();

export const ChannelSchema = z.enum(Channel);
export const StateSchema = z.enum(IntentState);

export const FieldErrorSchema = z.object({
  path: z.string().meta({ description: 'dotted path into the request (recipient.phone, channels.1)' }),
  code: z.string().meta({ description: 'stable snake_case rule code' }),
  message: z.string().meta({ description: 'the rule, never the submitted value' }),
});

/** RFC 9457; extension members (e.g. `noticeId`, `channels` on a 409) may follow. */
export const ProblemSchema = z.looseObject({
  type: z.string().meta({ description: 'stable URI naming the rule (https://notice-ledger.dev/problems/…)' }),
  title: z.string(),
  status: z.number().int(),
  detail: z.string().optional(),
  instance: z.string().optional(),
  errors: z.array(FieldErrorSchema).optional(),
});

/** The 409 of `POST /v1/notices` (docs/api.md "409: what differs"): what happened on each channel. */
export const NoticeConflictSchema = ProblemSchema.extend({
  noticeId: z.string(),
  channels: z.array(
    z.object({
      channel: ChannelSchema,
      state: StateSchema.meta({
        description: "the channel's state after this request (a conflicting one is unchanged)",
      }),
      outcome: z.enum(['created', 'duplicate', 'conflict']).meta({
        description:
          'created: recorded by this request (and sent); duplicate: recorded already with the same content; conflict: recorded with other content',
      }),
      differs: z.array(z.string()).optional().meta({
        description:
          'on a conflict: the parts that differ, by path (template.id, template.version, priority, fallback, recipient.email, recipient.phone, variables.<name>, or variables for a row recorded before per-variable digests); past the hot window with the archived row unreadable, every part (may differ)',
      }),
    }),
  ),
}).meta({
  description:
    'errors[]: one per differing path, code differs_from_recorded, or may_differ_from_recorded where the record cannot tell (a row from before per-variable digests, an archived row that could not be read)',
});

export const NoticeRecordedSchema = z.object({
  noticeId: z.string(),
  created: z.boolean().meta({ description: 'true: this request recorded it (202); false: a replay (200)' }),
  channels: z.array(
    z.object({
      channel: ChannelSchema,
      state: StateSchema,
      estimatedSendAt: isoTime().optional().meta({
        description:
          'a channel this request recorded whose provider rate is known: when it will likely be sent, from the backlog ahead of its lane (docs/architecture.md §11)',
      }),
      deadlineAtRisk: z.boolean().optional().meta({
        description:
          'with estimatedSendAt: the estimate passes the deadline; the channel carries a deadline_at_risk escalation and keeps trying',
      }),
    }),
  ),
});

export const BatchResponseSchema = z.object({
  results: z.array(
    z.object({
      index: z.number().int().min(0),
      status: z.number().int().meta({ description: 'the status the same notice would get alone' }),
      noticeId: z.string().optional(),
      error: ProblemSchema.optional(),
    }),
  ),
});

export const TimelineTransitionSchema = z.object({
  seq: z.number().int().min(1),
  at: isoTime(),
  from: StateSchema.nullable(),
  to: StateSchema,
  reason: z.string().meta({ description: 'stable snake_case reason code' }),
  attempt: z.number().int().min(0).optional(),
  detail: z.string().optional(),
  actor: z.string().optional().meta({
    description: 'who wrote it, on records by a person or business caller: IAM principal ARN, or `local`',
  }),
});

export const NextStepSchema = z
  .object({
    kind: z
      .enum(['send', 'retry', 'window', 'held', 'check', 'outcome', 'lookup', 'operator', 'report', 'none'])
      .meta({
        description:
          "send: waiting for a worker, failed at the deadline if not sent; retry: a retry is scheduled; window: held for the channel's send window, sent when it opens; held: the channel is held (a provider's slow down, an operator hold); check: the provider's pre-send check is not answered, asked again with backoff; outcome: an attempt is in flight; lookup: the outcome is unknown, the provider is asked; operator: escalated, a person is expected to act; report: accepted, a final delivery report is waited for; none: nothing more",
      }),
    at: nullable(isoTime()).meta({
      description:
        'when it happens, or by when (send, check: the deadline; retry: the retry; window: its opening; held: the end of the hold; outcome: the lease end; lookup: when the policy decides; report: the end of the follow-up); null when the step names no time',
    }),
    summary: z
      .string()
      .meta({ description: 'the step in one line of plain words (ids, codes and times only)' }),
  })
  .meta({ description: 'what happens next to the channel, derived from its row' });

export const LastReasonSchema = z
  .object({
    reason: z.string().meta({ description: "the channel's last record's reason (stable snake_case code)" }),
    at: isoTime(),
    detail: nullable(z.string()),
  })
  .meta({ description: "the channel's last record: why it is where it is" });

/** Where a channel's story was read (lambdas/use-cases/read-notice.ts). */
const StorySourceSchema = z.enum(['ledger', 'archive']);

export const TimelineChannelSchema = z.object({
  channel: ChannelSchema,
  source: StorySourceSchema.meta({
    description:
      'where this channel was read: ledger, the table (where a channel stays HOT_RETENTION after it resolved); archive, the write-once archive once its row left the table: final, its next step is none',
  }),
  state: StateSchema,
  destination: z.object({ fingerprint: z.string(), masked: z.string() }),
  provider: nullable(z.string()),
  providerReceiptId: nullable(z.string()),
  attempts: z.number().int().min(0),
  priority: z
    .enum(PRIORITIES as [Priority, ...Priority[]])
    .meta({ description: 'the lane the channel waits in (critical before standard before bulk)' }),
  nextAttemptAt: nullable(isoTime()),
  escalatedAt: nullable(isoTime()).meta({
    description:
      "since when this channel's current unknown has been escalated to a person, waiting for an operator's resolution (UNKNOWN_POLICY=escalate); null otherwise. The unknown_escalated record stays in transitions",
  }),
  submittedBy: nullable(z.string()).meta({
    description:
      'the IAM principal whose request recorded this channel, as a role (an assumed-role session is its role) or user ARN; null on channels recorded before submitters were',
  }),
  next: NextStepSchema,
  transitions: z.array(TimelineTransitionSchema),
  sms: z
    .object({
      encoding: z.enum(['GSM-7', 'UCS-2']),
      segments: z.number().int(),
      characters: z.number().int(),
    })
    .nullable()
    .optional(),
});

export const TimelineSchema = z.object({
  noticeId: z.string(),
  source: z.enum([...StorySourceSchema.options, 'mixed']).meta({
    description:
      "where the notice was read: ledger, every channel from the table; archive, every channel from the archive (the notice is past the hot window); mixed, some of each (each channel's source says which)",
  }),
  eventId: z.string(),
  eventType: z.string(),
  recipientId: z.string(),
  template: z.object({ id: z.string(), version: z.string() }),
  createdAt: isoTime(),
  deadline: isoTime(),
  channels: z.array(TimelineChannelSchema),
});

export const NoticeListItemSchema = z.object({
  noticeId: z.string(),
  channel: ChannelSchema,
  state: z.enum(LISTABLE_STATES),
  createdAt: isoTime(),
  deadline: isoTime(),
  attempts: z.number().int().min(0),
  ageSeconds: z.number().int().min(0).meta({ description: 'now − createdAt' }),
  escalated: z.boolean().meta({ description: 'an escalation was raised and a person is expected to act' }),
  lastReason: nullable(LastReasonSchema).meta({
    description: "the channel's last record (null when its row could not be read for the list)",
  }),
  next: nullable(NextStepSchema).meta({
    description: 'what happens next to the channel (null when its row could not be read for the list)',
  }),
});

export const NoticeListSchema = z.object({
  items: z
    .array(NoticeListItemSchema)
    .meta({ description: 'oldest first; with state=failed, the most recently failed first' }),
  nextCursor: z
    .string()
    .nullable()
    .meta({ description: 'pass as `cursor` for the next page; null on the last' }),
});

export const CancelResponseSchema = z.object({
  noticeId: z.string(),
  channels: z.array(
    z.object({
      channel: ChannelSchema,
      state: StateSchema,
      cancelled: z.boolean().meta({
        description: 'false for a channel already with the provider (sending, unknown) or settled before',
      }),
    }),
  ),
});

export const SuppressionRecordSchema = z.object({
  action: z.enum(SuppressionAction).meta({ description: 'suppress, or lift (an operator lifted it)' }),
  reason: z.string().meta({ description: 'snake_case code: hard_bounce, complaint, operator, …' }),
  source: z.enum(SuppressionSource),
  actor: z.string().meta({
    description:
      "who stated it: the provider (its id, as EMAIL_PROVIDER / SMS_PROVIDER name it), or the operator (IAM principal ARN; on the local stack the body's actor or the default)",
  }),
  at: isoTime(),
  code: z.string().nullable().meta({ description: "the provider's own code (an error code, a bounce type)" }),
});

export const SuppressionSchema = z.object({
  channel: ChannelSchema,
  destination: z.object({ fingerprint: z.string(), masked: z.string() }),
  suppressed: z.boolean().meta({ description: 'the effective state: the latest record is a suppress' }),
  latest: SuppressionRecordSchema,
  history: z
    .array(SuppressionRecordSchema)
    .meta({ description: 'oldest first; at most the newest 100 records, appended, never rewritten' }),
  historyTruncated: z.boolean().meta({ description: 'older records exist beyond history' }),
});

export const HealthSchema = z.object({ status: z.literal('ok') });

/** The body of `POST /v1/notices` as a client writes it (the schema's input side). */
export type NoticeRequestBody = z.input<typeof NoticeRequestSchema>;
export type NoticeRecorded = z.infer<typeof NoticeRecordedSchema>;
export type BatchResponse = z.infer<typeof BatchResponseSchema>;
export type NoticeList = z.infer<typeof NoticeListSchema>;
export type NoticeListItem = z.infer<typeof NoticeListItemSchema>;
export type CancelResponse = z.infer<typeof CancelResponseSchema>;
export type Suppression = z.infer<typeof SuppressionSchema>;
export type ProblemBody = z.infer<typeof ProblemSchema>;

// The timeline is built by `toTimeline`, a suppression by `toSuppressionView`; each schema must
// describe exactly that type.
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Writable<T> = {
  -readonly [K in keyof T]: T[K] extends readonly (infer U)[] ? Writable<U>[] : Writable<T[K]>;
};
type Assert<T extends true> = T;
export type TimelineSchemaMatches = Assert<
  Equal<Writable<Timeline>, Writable<z.infer<typeof TimelineSchema>>>
>;
export type TimelineChannelSchemaMatches = Assert<
  Equal<Writable<TimelineChannel>, Writable<z.infer<typeof TimelineChannelSchema>>>
>;
export type SuppressionSchemaMatches = Assert<
  Equal<Writable<SuppressionView>, Writable<z.infer<typeof SuppressionSchema>>>
>;
