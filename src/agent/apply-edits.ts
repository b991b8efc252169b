import type { ModelMessage } from 'ai';
import { describeChanges, diffInputs } from '../approvals/input-diff.js';
import type { PendingStep } from '../approvals/pending-step.js';

/** Attached to an edited call's result so the model learns a human changed it, and how. */
export interface EditNote {
  editedBy: string;
  changes: string[];
  originalInput: unknown;
  note: string;
}

/**
 * Rewrites the edited calls in the stored history so the AI SDK validates and runs the human's
 * input (it has no native "edit" on approval). The approval request's `inputSchemaInput` becomes the
 * submitted input, because the SDK re-parses that and requires the result to equal the call's input.
 */
export function applyEditsToHistory(messages: ModelMessage[], step: PendingStep): ModelMessage[] {
  const byToolCallId = new Map<string, { input: unknown; submittedInput: unknown }>();
  const byApprovalId = new Map<string, unknown>();
  for (const call of step.calls) {
    const edit = step.decisions[call.approvalId]?.edit;
    if (step.decisions[call.approvalId]?.outcome !== 'approved' || !edit) continue;
    byToolCallId.set(call.toolCallId, edit);
    byApprovalId.set(call.approvalId, edit.submittedInput);
  }
  if (byToolCallId.size === 0) return messages;
  return messages.map((message) => {
    if (message.role !== 'assistant' || typeof message.content === 'string') return message;
    let changed = false;
    const content = message.content.map((part) => {
      if (part.type === 'tool-call' && byToolCallId.has(part.toolCallId)) {
        changed = true;
        return { ...part, input: byToolCallId.get(part.toolCallId)?.input };
      }
      if (part.type === 'tool-approval-request' && byApprovalId.has(part.approvalId)) {
        changed = true;
        return { ...part, inputSchemaInput: byApprovalId.get(part.approvalId) };
      }
      return part;
    });
    return changed ? { ...message, content } : message;
  });
}

/** Edit notes by tool call id, for the calls of a step a human edited and approved. */
export function editNotesFor(step: PendingStep): Map<string, EditNote> {
  const notes = new Map<string, EditNote>();
  for (const call of step.calls) {
    const decision = step.decisions[call.approvalId];
    if (decision?.outcome !== 'approved' || !decision.edit) continue;
    const editedBy = `<@${decision.userId}>`;
    notes.set(call.toolCallId, {
      editedBy,
      changes: describeChanges(diffInputs(call.input, decision.edit.input)),
      originalInput: call.input,
      note: `${editedBy} edited this call's arguments before approving it. It ran with the edited arguments shown in the call, not your original ones (originalInput). Do not re-issue the original call unless the user asks.`,
    });
  }
  return notes;
}
