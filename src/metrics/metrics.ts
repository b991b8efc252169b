import { noOperationMetrics, type OperationMetrics } from './operation-metrics.js';

/**
 * What the core reports for an operator's dashboards. The core calls this narrow interface; the
 * edge picks the exporter (`prometheus-metrics.ts`), so nothing in the core knows about one.
 */
export interface Metrics extends OperationMetrics {
  /** A person's action on a call was recorded: the call's outcome (or `counted` towards a quorum, `edited`). */
  decisionRecorded(options: { toolName: string; outcome: 'approved' | 'denied' | 'answered' | 'counted' | 'edited'; waitedMs: number }): void;
  /** A click or form was refused; `reason` is the refusal's code (`not-approver`, `expired`, …). */
  actionRefused(options: { reason: string }): void;
  /** A tool ran (or threw). */
  toolExecuted(options: { toolName: string; status: 'ok' | 'error'; durationMs: number }): void;
  /** A turn ended: `answered`, `waiting` for people (a card), or `failed`. */
  turnFinished(options: { outcome: 'answered' | 'waiting' | 'failed'; durationMs: number }): void;
}

export const noMetrics: Metrics = {
  ...noOperationMetrics,
  decisionRecorded() {},
  actionRefused() {},
  toolExecuted() {},
  turnFinished() {},
};
