import type { ModelMessage, ToolContent } from 'ai';
import type { Decision, PendingCall, PendingStep } from '../approvals/pending-step.js';
import type { ExecutionRecord } from './tool-set.js';

/** The text the model reads for a call a human did not let run. Framed so it does not retry. */
export function denialReason(decision: Decision): string {
  const who = `<@${decision.userId}>`;
  switch (decision.outcome) {
    case 'denied':
      return `Declined by ${who}${decision.reason ? `: ${decision.reason}` : ''}. This is a human decision, not an error: do not retry this call unless the user asks again.`;
    case 'superseded':
      return `Not run: ${who} sent a newer message before this call was decided. Do not retry it unless the user asks again.`;
    case 'approved':
      return `Approved by ${who}, but not run because a newer message arrived before every call in this step was decided. Do not retry it unless the user asks again.`;
  }
}

/**
 * The tool message that resumes a complete step: all of its decisions in ONE message, because the
 * AI SDK only reads approvals from the last message and fails when a step is answered piecemeal.
 */
export function resumeToolMessage(step: PendingStep): ModelMessage {
  const content: ToolContent = step.calls.map((call) => {
    const decision = decisionFor(step, call);
    return decision.outcome === 'approved'
      ? {
          type: 'tool-approval-response',
          approvalId: call.approvalId,
          approved: true,
          reason: `${decision.edit ? 'edited and approved' : 'approved'} by <@${decision.userId}>`,
        }
      : { type: 'tool-approval-response', approvalId: call.approvalId, approved: false, reason: denialReason(decision) };
  });
  return { role: 'tool', content };
}

/**
 * Closes every call of a step that will not resume (a newer message superseded it) with an explicit
 * denied result, so the history stays valid for the next model call and nothing runs later.
 */
export function closingToolMessage(step: PendingStep): ModelMessage {
  const content: ToolContent = [];
  for (const call of step.calls) {
    const reason = denialReason(decisionFor(step, call));
    content.push({ type: 'tool-approval-response', approvalId: call.approvalId, approved: false, reason });
    content.push({ type: 'tool-result', toolCallId: call.toolCallId, toolName: call.toolName, output: { type: 'execution-denied', reason } });
  }
  return { role: 'tool', content };
}

/** Records results of tools that ran in a turn whose model call then failed, so they never run twice. */
export function executedResultsMessage(executions: readonly ExecutionRecord[]): ModelMessage {
  return {
    role: 'tool',
    content: executions.map((execution) => ({
      type: 'tool-result',
      toolCallId: execution.toolCallId,
      toolName: execution.toolName,
      output: { type: 'json', value: toJsonValue(execution.output) },
    })),
  };
}

function decisionFor(step: PendingStep, call: PendingCall): Decision {
  return step.decisions[call.approvalId] ?? { outcome: 'superseded', userId: step.requesterId, at: step.createdAt };
}

function toJsonValue(value: unknown): never {
  return JSON.parse(JSON.stringify(value ?? null)) as never;
}
