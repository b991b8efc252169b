import type { Tracer } from '@opentelemetry/api';
import type { LanguageModel } from 'ai';
import type { Logger } from 'pino';
import type { ApprovalHook } from '../approvals/approval-hook.js';
import type { GroupMembers } from '../approvals/policy/approver-eligibility.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { PolicyConfig } from '../config/policy-config-schema.js';
import type { ScheduleConfig } from '../config/schedule-config-schema.js';
import type { Metrics } from '../metrics/metrics.js';
import type { StateStore } from '../store/state-store.js';
import type { ToolDefinition } from '../tools/tool-definition.js';
import type { HistoryLimits } from './turn-scope.js';

/**
 * What the phases of a conversation (handle a message, resume a step, run and publish, post the
 * card, thread notes) are built from. Each phase takes only the part it uses (`Pick`), so its
 * file says what it touches.
 */
export interface PhaseDependencies {
  store: StateStore;
  audit: AuditLog;
  model: LanguageModel;
  instructions: string;
  /** Live: MCP servers connect late and reconnect, so look tools up per call. */
  tools: readonly ToolDefinition[];
  policy: PolicyConfig;
  /** Tool sources that are down, or whose tools are withheld until the config changes (`needsConfigChange`). */
  toolProblems?: () => ReadonlyArray<{ source: string; message: string; needsConfigChange?: boolean }>;
  /** `fresh`: past the per-process cache, for a check that decides whether a call runs (a grant's at the gate). */
  resolveGroups: (groupIds: readonly string[], options?: { fresh?: boolean }) => Promise<GroupMembers>;
  /**
   * The channels a person is in, or undefined when Slack could not say; `fresh` as for `resolveGroups`.
   * A grant under a `channel` approver holds only while its grantor is in the grant's channel.
   */
  channelsOf: (userId: string, options?: { fresh?: boolean }) => Promise<ReadonlySet<string> | undefined>;
  /**
   * `statusDelayMs`: how long a turn runs before its status line shows (`TURN_STATUS_DELAY_MS`);
   * `cardRecordWaitMs`: how long a posted card's ts waits for an unavailable store (`CARD_RECORD_WAIT_MS`).
   */
  limits: HistoryLimits & { maxSteps: number; modelTimeoutMs?: number; statusDelayMs?: number; cardRecordWaitMs?: number };
  logger: Logger;
  botUserId: string;
  now: () => number;
  /** A new step's id; the default names the thread's Redis shard (`store/redis-keys.ts`), so the step lives beside its thread. */
  newStepId: (threadKey: string) => string;
  /** Turns and tool runs counted for the operator's dashboards. */
  metrics: Metrics;
  /** `createBot({ onApprovalRequest })`: code that may decide a call before people see its card. */
  approvalHook?: ApprovalHook;
  /** The config's `schedules:`: a scheduled turn's own auto-approve list is looked up by its requester. */
  schedules?: readonly ScheduleConfig[];
  /** Where the phases' spans go (each item's span is in `TurnScope.traceContext`). */
  tracer: Tracer;
}
