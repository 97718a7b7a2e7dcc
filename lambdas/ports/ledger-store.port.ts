import type { BatchRecords } from './batch-records.port.ts';
import type { IntentReservations, IntentTransitions, NoticeReader } from './intent-ledger.port.ts';
import type { KeyCheckStore } from './key-checks.port.ts';
import type { EscalationMarkers, OpenIndex } from './open-index.port.ts';
import type { RecentFailures } from './recent-failures.port.ts';
import type { Suppressions } from './suppressions.port.ts';
import type { ThrottleGateStore } from './throttle-gate.port.ts';

/**
 * The whole ledger table, as its adapters implement it (one table, one item layout:
 * docs/table-design.md). No use case takes it: each names the ports it uses
 * (lambdas/use-cases/dependencies.ts), and each function is composed from those
 * (lambdas/wiring/). Tests, the local stack and benchmarks hold the whole.
 */
export interface LedgerStore
  extends IntentReservations,
    IntentTransitions,
    NoticeReader,
    OpenIndex,
    EscalationMarkers,
    Suppressions,
    BatchRecords,
    KeyCheckStore,
    ThrottleGateStore,
    RecentFailures {}
