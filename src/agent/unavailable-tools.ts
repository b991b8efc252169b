import type { ModelMessage } from 'ai';

/** A call the AI SDK will run when the turn resumes: approved, and without a result yet. */
export interface AwaitingCall {
  toolCallId: string;
  toolName: string;
  /** The call's input as the history holds it: what the tool's schema made of the model's input. */
  input: unknown;
  /** What the schema was given (the model's raw input), which the AI SDK validates again on resume. */
  schemaInput: unknown;
}

/**
 * The approved calls of the step a history resumes: the approvals in its last tool message that
 * have no result there. The AI SDK runs each of them before asking the model again, and skips one
 * whose tool is not in the turn's tool set, leaving the call without a result (the next model
 * request then fails). These are the calls that need a tool to answer them, present or not.
 */
export function approvedCallsAwaitingRun(messages: readonly ModelMessage[]): AwaitingCall[] {
  const last = messages.at(-1);
  if (last?.role !== 'tool') return [];
  const approved = new Set(last.content.flatMap((part) => (part.type === 'tool-approval-response' && part.approved ? [part.approvalId] : [])));
  const answered = new Set(last.content.flatMap((part) => (part.type === 'tool-result' ? [part.toolCallId] : [])));
  const toolCalls = new Map<string, { toolName: string; input: unknown }>();
  const awaiting: AwaitingCall[] = [];
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const part of message.content) {
      if (part.type === 'tool-call') toolCalls.set(part.toolCallId, { toolName: part.toolName, input: part.input });
      if (part.type !== 'tool-approval-request' || !approved.has(part.approvalId) || answered.has(part.toolCallId)) continue;
      const call = toolCalls.get(part.toolCallId);
      // As the AI SDK reads it: the raw input is kept on the request only when the schema changed it.
      const schemaInput = Object.hasOwn(part, 'inputSchemaInput') ? part.inputSchemaInput : call?.input;
      if (call !== undefined) awaiting.push({ toolCallId: part.toolCallId, toolName: call.toolName, input: call.input, schemaInput });
    }
  }
  return awaiting;
}

/**
 * What the model (and the audit trail) is told for an approved call whose tool this process does
 * not have: an MCP server that is down (a process that started while it was has none of its tools)
 * or stopped offering it, or a tool a newer deploy removed. Nothing was started, so it says "not run",
 * never "failed", and the model can tell the user instead of the turn failing.
 */
export function unavailableToolText(toolName: string): string {
  return `Not run: ${toolName} is not available now (this bot has no such tool at the moment: its MCP server may be down or no longer offer it, or the tool was removed); nothing was run. Tell the user; if it is still needed, ask for it again once it is back.`;
}
