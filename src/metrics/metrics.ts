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
  /** A click's decision found the store unavailable and will be tried again shortly (once per wait). */
  decisionWaitedForStore(): void;
  /** A tool ran (or threw). */
  toolExecuted(options: { toolName: string; status: 'ok' | 'error'; durationMs: number }): void;
  /** A turn ended: `answered`, `waiting` for people (a card), or `failed`. */
  turnFinished(options: { outcome: 'answered' | 'waiting' | 'failed'; durationMs: number }): void;
  /** A turn (work item) was let start, after waiting `waitedMs` for room (0 when there was room at once). */
  turnAdmitted(options: { waitedMs: number }): void;
  /** A hop of an escalation ladder was made; `stage` is the card's stage it moved to (2 after the first hop). */
  escalated(options: { stage: number }): void;
  /** A call expired without a decision, under `rule` (its name, `rules[<index>]`, or `defaults`). */
  approvalExpired(options: { rule: string }): void;
}

export const noMetrics: Metrics = {
  ...noOperationMetrics,
  decisionRecorded() {},
  actionRefused() {},
  decisionWaitedForStore() {},
  toolExecuted() {},
  turnFinished() {},
  turnAdmitted() {},
  escalated() {},
  approvalExpired() {},
};

/**
 * Approvals waiting for people, by policy rule: read from the shared store when scraped (a count
 * kept per process would be wrong with several replicas). `oldestCreatedAt` is epoch milliseconds.
 */
export interface PendingApprovalsByRule {
  rule: string;
  pending: number;
  oldestCreatedAt: number;
}
