import type { AuditEventInput } from '../audit/audit-event.js';
import { decisionOf, isQuestion, type Decision, type PendingStep } from '../approvals/pending-step.js';
import type { ToolDefinition } from '../tools/tool-definition.js';
import { currentFingerprint, definitionChangedSince } from './changed-definition.js';
import { COUNTERSIGN_ACTOR } from './decision-messages.js';

/** An approved call whose tool is no longer the one its approvers signed, closed before the turn runs. */
export interface StaleApproval {
  approvalId: string;
  toolName: string;
  code: 'tool-unavailable' | 'tool-changed';
  reason: string;
}

/**
 * Approved calls whose tool a deploy removed or changed while the card waited, judged when the resume
 * is claimed: each is closed by countersign (not by a person), so the card says "Not run" and why
 * instead of "Approved by", and the model hears an error, not a refusal. The tool set's stand-ins
 * (`createTurnTools`) still answer "not run" for a change that lands between this claim and the
 * start, and for Try again. Hook-approved calls too: the hook approved the recorded definition.
 */
export async function closeStaleApprovals(options: { step: PendingStep; tools: readonly ToolDefinition[]; at: number }): Promise<{ step: PendingStep; stale: StaleApproval[] }> {
  const { step } = options;
  const stale: StaleApproval[] = [];
  for (const call of step.calls) {
    if (isQuestion(call) || decisionOf(step, call.approvalId)?.outcome !== 'approved') continue;
    const definition = options.tools.find((tool) => tool.name === call.toolName && tool.execute !== undefined);
    const name = `\`${call.toolName}\``;
    if (!definition) {
      stale.push({ approvalId: call.approvalId, toolName: call.toolName, code: 'tool-unavailable', reason: `${name} is not available now (a deploy removed it, or its server is not connected), so nothing was run` });
    } else if (await definitionChangedSince({ recorded: call.definitionFingerprint, current: currentFingerprint(definition) })) {
      stale.push({ approvalId: call.approvalId, toolName: call.toolName, code: 'tool-changed', reason: `${name} changed since it was approved (a deploy updated its definition), so nothing was run` });
    }
  }
  if (stale.length === 0) return { step, stale };
  const decisions: Record<string, Decision> = { ...step.decisions };
  for (const { approvalId, reason } of stale) decisions[approvalId] = { outcome: 'denied', userId: COUNTERSIGN_ACTOR, at: options.at, reason };
  return { step: { ...step, decisions }, stale };
}

/** Closed by countersign: the audit trail names no person for it. */
export function staleApprovalEvent(step: PendingStep, stale: StaleApproval): AuditEventInput {
  return { type: 'action-refused', teamId: step.teamId, channel: step.channel, stepId: step.stepId, approvalId: stale.approvalId, toolName: stale.toolName, userId: COUNTERSIGN_ACTOR, action: 'resume', code: stale.code, reason: stale.reason };
}
