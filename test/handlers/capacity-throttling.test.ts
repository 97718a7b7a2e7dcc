import {
  ProvisionedThroughputExceededException,
  ThrottlingException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isCapacityExceeded } from '../../lambdas/adapters/dynamodb/capacity.ts';
import { MemoryLedgerStore } from '../../lambdas/adapters/memory/memory-ledger-store.ts';
import { deriveNoticeId } from '../../lambdas/domain/identity.ts';
import { CAPACITY_RETRY_AFTER_SECONDS } from '../../lambdas/edge/problem.ts';
import { logger, metrics } from '../../lambdas/wiring/observability.ts';
import { contentType } from '../helpers/api-events.ts';
import { harness } from '../helpers/http-harness.ts';

/*
 * DynamoDB throttling at the HTTP edge (docs/cost.md "Provisioned capacity with auto scaling": provisioned capacity with auto
 * scaling). DynamoDB Local accepts provisioned throughput but never enforces it, so no local
 * table throttles: the errors are injected here as the SDK throws them once its own retries are
 * spent (the SDK's own exception classes, with the names and cancellation reasons DynamoDB sends).
 */

const metadata = { $metadata: { httpStatusCode: 400 } };
const provisionedExceeded = () =>
  new ProvisionedThroughputExceededException({
    ...metadata,
    message: 'The level of configured provisioned throughput for the table was exceeded.',
  });
/** A two-channel reservation (one TransactWriteItems) throttled on its items. */
const transactionThrottled = () =>
  new TransactionCanceledException({
    ...metadata,
    message:
      'Transaction cancelled, please refer cancellation reasons for specific reasons [ThrottlingError, None]',
    CancellationReasons: [{ Code: 'ThrottlingError' }, { Code: 'None' }],
  });

function notice(eventId: string): Record<string, unknown> {
  return {
    eventId,
    eventType: 'lab-result-ready',
    recipient: { id: 'pat_1042', email: 'someone@example.com', phone: '+15551234567' },
    channels: ['email', 'sms'],
    template: { id: 'lab-result-ready', version: 'v3' },
    variables: { firstName: 'Ada', portalUrl: 'https://portal.example.org/r/1' },
    deadline: '2026-12-01T09:00:00Z',
  };
}

let warnings: unknown[][];
let errors: unknown[][];

beforeEach(() => {
  warnings = [];
  errors = [];
  vi.spyOn(logger, 'info').mockImplementation((() => undefined) as never);
  vi.spyOn(logger, 'warn').mockImplementation(((...args: unknown[]) => warnings.push(args)) as never);
  vi.spyOn(logger, 'error').mockImplementation(((...args: unknown[]) => errors.push(args)) as never);
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('DynamoDB over capacity at intake', () => {
  it.each([
    ['ProvisionedThroughputExceededException', provisionedExceeded],
    ['a transaction cancelled for ThrottlingError', transactionThrottled],
    ['ThrottlingException', () => new ThrottlingException({ ...metadata, message: 'Rate exceeded' })],
  ])(
    'POST /v1/notices throttled (%s) → 503 problem+json with Retry-After, not counted as a 500',
    async (_, error) => {
      // Prepare
      const store = new MemoryLedgerStore();
      vi.spyOn(store, 'reserve').mockRejectedValue(error());
      const h = harness({ store });
      const counted = vi.spyOn(metrics, 'addMetric').mockReturnValue(metrics);

      // Act
      const reply = await h.call({ method: 'POST', path: '/v1/notices', body: notice('evt_busy') });

      // Assess
      expect(reply.status).toBe(503);
      expect(contentType(reply.raw)).toBe('application/problem+json');
      expect(reply.raw.headers?.['retry-after']).toBe(String(CAPACITY_RETRY_AFTER_SECONDS));
      expect(reply.json).toMatchObject({
        type: 'https://notice-ledger.dev/problems/capacity-exceeded',
        status: 503,
        title: 'Temporarily over capacity',
      });
      // Nothing of DynamoDB's message reaches the caller; the log names the error, as a warning.
      expect(reply.raw.body).not.toMatch(/throughput|Throttl|Transaction/i);
      expect(warnings).toEqual([
        ['http request throttled', expect.objectContaining({ route: 'POST /v1/notices' })],
      ]);
      expect(errors).toEqual([]);
      expect(counted.mock.calls.filter(([name]) => name === 'HttpInternalErrors')).toEqual([]);
    },
  );

  it('the same POST sent again once capacity is back records the notice (202): nothing was half-written', async () => {
    // Prepare
    const store = new MemoryLedgerStore();
    vi.spyOn(store, 'reserve').mockRejectedValueOnce(provisionedExceeded());
    const h = harness({ store });

    // Act
    const refused = await h.call({ method: 'POST', path: '/v1/notices', body: notice('evt_again') });
    const accepted = await h.call({ method: 'POST', path: '/v1/notices', body: notice('evt_again') });

    // Assess
    expect(refused.status).toBe(503);
    expect(accepted.status).toBe(202);
    expect(accepted.json.created).toBe(true);
    expect(
      await h.store.get(deriveNoticeId('lab-result-ready', 'evt_again', 'pat_1042'), 'sms'),
    ).toBeDefined();
  });

  it('a throttled batch item is answered 503 on its own, the response carries Retry-After, the others stand', async () => {
    // Prepare
    const store = new MemoryLedgerStore();
    const reserve = store.reserve.bind(store);
    vi.spyOn(store, 'reserve').mockImplementation(async (...args) => {
      if (args[0].eventId === 'evt_throttled') throw provisionedExceeded();
      return reserve(...args);
    });
    const h = harness({ store });

    // Act
    const reply = await h.call({
      method: 'POST',
      path: '/v1/notices/batch',
      body: { notices: [notice('evt_fine'), notice('evt_throttled')] },
    });

    // Assess
    expect(reply.status).toBe(200);
    expect(reply.raw.headers?.['retry-after']).toBe(String(CAPACITY_RETRY_AFTER_SECONDS));
    expect(reply.json.results.map((r: { status: number }) => r.status)).toEqual([202, 503]);
    expect(reply.json.results[1].error).toMatchObject({
      type: 'https://notice-ledger.dev/problems/capacity-exceeded',
      status: 503,
    });
    expect(errors).toEqual([]);
  });

  it('any other failure stays the generic 500 without Retry-After', async () => {
    // Prepare: a transaction refused for a reason other than capacity is not a throttle.
    const store = new MemoryLedgerStore();
    vi.spyOn(store, 'reserve').mockRejectedValue(
      new TransactionCanceledException({
        ...metadata,
        message: 'Transaction cancelled [ValidationError, ThrottlingError]',
        CancellationReasons: [{ Code: 'ValidationError' }, { Code: 'ThrottlingError' }],
      }),
    );
    const h = harness({ store });
    vi.spyOn(metrics, 'addMetric').mockReturnValue(metrics);

    // Act
    const reply = await h.call({ method: 'POST', path: '/v1/notices', body: notice('evt_broken') });

    // Assess
    expect(reply.status).toBe(500);
    expect(reply.raw.headers?.['retry-after']).toBeUndefined();
    expect(errors).toHaveLength(1);
  });
});

describe('isCapacityExceeded', () => {
  it('knows DynamoDB’s capacity refusals, and nothing else', () => {
    expect(isCapacityExceeded(provisionedExceeded())).toBe(true);
    expect(isCapacityExceeded(transactionThrottled())).toBe(true);
    expect(
      isCapacityExceeded(Object.assign(new Error('Too many requests'), { name: 'RequestLimitExceeded' })),
    ).toBe(true);
    expect(isCapacityExceeded(new Error('ProvisionedThroughputExceededException'))).toBe(false);
    expect(
      isCapacityExceeded(
        new TransactionCanceledException({
          ...metadata,
          message: 'conflict',
          CancellationReasons: [{ Code: 'ConditionalCheckFailed' }, { Code: 'ThrottlingError' }],
        }),
      ),
    ).toBe(false);
    expect(isCapacityExceeded('ThrottlingException')).toBe(false);
  });
});
