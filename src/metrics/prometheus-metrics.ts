import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import type { Metrics, PendingApprovalsByRule } from './metrics.js';
import { registerPendingApprovalGauges } from './pending-approval-gauges.js';
import { createPrometheusOperationMetrics } from './operation-metrics.js';
import { registerCommandLoadGauges, registerTurnLoadGauges, type Load } from './load-gauges.js';

export interface PrometheusMetrics {
  metrics: Metrics;
  registry: Registry;
  /** Where `countersign_turns_running` and `countersign_turns_waiting` are read from (once the load gates exist). */
  observeTurnLoad(read: () => Load): void;
  /** Where `countersign_commands_running` and `countersign_commands_waiting` are read from. */
  observeCommandLoad(read: () => Load): void;
  /** The body and content type of `GET /metrics`. */
  render(): Promise<{ contentType: string; body: string }>;
}

/** Seconds buckets for things people do (deciding) and things machines do (tools, turns). */
const HUMAN_SECONDS = [5, 15, 30, 60, 120, 300, 600, 1800, 3600, 14_400, 86_400];
const MACHINE_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Most turns start at once; a wait of a tenth of a second already says the process is full. */
const ADMISSION_SECONDS = [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The metrics in Prometheus's format (`prom-client`), Node's default process metrics included. */
export function createPrometheusMetrics({ pendingApprovals, now = Date.now }: { pendingApprovals?: () => Promise<PendingApprovalsByRule[]>; now?: () => number } = {}): PrometheusMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'countersign_' });
  if (pendingApprovals) registerPendingApprovalGauges({ registry, read: pendingApprovals, now });
  const decisions = new Counter({ name: 'countersign_decisions_total', help: 'Actions on calls recorded, by outcome (approved, denied, answered, counted towards a quorum, edited).', labelNames: ['outcome'], registers: [registry] });
  const timeToDecision = new Histogram({ name: 'countersign_time_to_decision_seconds', help: 'From the approval request to a recorded action on it.', labelNames: ['outcome'], buckets: HUMAN_SECONDS, registers: [registry] });
  const refusals = new Counter({ name: 'countersign_refusals_total', help: 'Clicks and forms refused, by reason.', labelNames: ['reason'], registers: [registry] });
  const storeWaits = new Counter({ name: 'countersign_decision_store_waits_total', help: 'Times a click waited for an unavailable Redis before trying its decision again.', registers: [registry] });
  const toolExecutions = new Counter({ name: 'countersign_tool_executions_total', help: 'Tool runs, by tool and status (ok or error).', labelNames: ['tool', 'status'], registers: [registry] });
  const toolDuration = new Histogram({ name: 'countersign_tool_duration_seconds', help: 'How long tools ran.', labelNames: ['tool'], buckets: MACHINE_SECONDS, registers: [registry] });
  const admissionWait = new Histogram({ name: 'countersign_turn_admission_wait_seconds', help: 'How long turns waited for this process to have room before they started (0 when there was room at once).', buckets: ADMISSION_SECONDS, registers: [registry] });
  const turnDuration = new Histogram({ name: 'countersign_turn_duration_seconds', help: 'Agent turns, by outcome (answered, waiting for people, failed), model time included.', labelNames: ['outcome'], buckets: MACHINE_SECONDS, registers: [registry] });
  // Escalation and expiry (issue 16), kept apart from the other metrics above.
  const escalations = new Counter({ name: 'countersign_escalations_total', help: 'Escalation hops made, by the stage the card moved to (2 after the first hop).', labelNames: ['stage'], registers: [registry] });
  const expiries = new Counter({ name: 'countersign_approvals_expired_total', help: 'Calls that expired without a decision, by policy rule.', labelNames: ['rule'], registers: [registry] });
  return {
    registry,
    metrics: {
      escalated: ({ stage }) => escalations.inc({ stage: String(stage) }),
      approvalExpired: ({ rule }) => expiries.inc({ rule }),
      ...createPrometheusOperationMetrics(registry),
      decisionRecorded({ outcome, waitedMs }) {
        decisions.inc({ outcome });
        timeToDecision.observe({ outcome }, Math.max(0, waitedMs) / 1000);
      },
      actionRefused: ({ reason }) => refusals.inc({ reason }),
      decisionWaitedForStore: () => storeWaits.inc(),
      toolExecuted({ toolName, status, durationMs }) {
        toolExecutions.inc({ tool: toolName, status });
        toolDuration.observe({ tool: toolName }, durationMs / 1000);
      },
      turnFinished: ({ outcome, durationMs }) => turnDuration.observe({ outcome }, durationMs / 1000),
      turnAdmitted: ({ waitedMs }) => admissionWait.observe(Math.max(0, waitedMs) / 1000),
    },
    observeTurnLoad: (read) => registerTurnLoadGauges({ registry, read }),
    observeCommandLoad: (read) => registerCommandLoadGauges({ registry, read }),
    render: async () => ({ contentType: registry.contentType, body: await registry.metrics() }),
  };
}
