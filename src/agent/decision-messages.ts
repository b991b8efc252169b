import { deciderText, hookNameOf } from '../approvals/approval-hook.js';
import type { ModelMessage, ToolContent, ToolResultPart } from 'ai';
import { isQuestion, type Decision, type PendingCall, type PendingStep } from '../approvals/pending-step.js';

/**
 * The decider of calls countersign closed itself because nobody could decide them (their card could
 * not be posted). Not a Slack user id: no one reads it as a person, and no click can pass for it.
 */
export const COUNTERSIGN_ACTOR = 'countersign';

/** The text the model reads for a call a human did not let run. Framed so it does not retry. */
export function denialReason(decision: Decision): string {
  const who = deciderText(decision.userId);
  switch (decision.outcome) {
    case 'denied':
      if (decision.userId === COUNTERSIGN_ACTOR) return notDecidedReason(decision);
      return `Declined by ${who}${decision.reason ? `: ${decision.reason}` : ''}. This is ${hookNameOf(decision.userId) === undefined ? 'a human decision' : "the operator's policy"}, not an error: do not retry this call unless the user asks again.`;
    case 'superseded':
      return `Not run: ${who} sent a newer message before this call was decided. Do not retry it unless the user asks again.`;
    case 'expired':
      return 'Expired: nobody decided before the approval request timed out, so it did not run. This is not a denial; if it is still needed, say so and ask again.';
    case 'approved':
    case 'answered':
      return `Not run: a newer message arrived before every call in this step was decided (this one was ${decision.outcome} by ${who}). Do not retry it unless the user asks again.`;
  }
}

/** Told as an error, not a refusal: nobody declined, so asking again is right when the user asks for it again. */
function notDecidedReason(decision: Decision): string {
  return `Not run: ${decision.reason ?? 'countersign closed this call'}. This was an error, not a decision: nobody declined this call, and nothing ran. Tell the user; if they ask for it again, request it again.`;
}

/** What the model reads for a question that got no answer. Only a scheduled turn's questions expire: nobody came to answer. */
function questionClosedReason(decision: Decision): string {
  if (decision.outcome !== 'expired') return denialReason(decision);
  return 'Expired: nobody answered this question before it timed out. This is not an answer, so do not assume one: go on with what does not depend on it, and say what you would have needed to know.';
}

/**
 * The tool message that resumes a complete step: all of its decisions in ONE message, because the
 * AI SDK only reads approvals from the last message and fails when a step is answered piecemeal.
 * A question's answer is its result; an approval is an approval response the SDK acts on.
 */
export function resumeToolMessage(step: PendingStep): ModelMessage {
  const content: ToolContent = step.calls.map((call) => {
    const decision = decisionFor(step, call);
    if (isQuestion(call)) {
      return decision.outcome === 'answered' ? answerResult(call, decision) : deniedResult(call, questionClosedReason(decision));
    }
    return decision.outcome === 'approved'
      ? {
          type: 'tool-approval-response',
          approvalId: call.approvalId,
          approved: true,
          reason: `approved by ${(decision.approvedBy ?? [decision.userId]).map(deciderText).join(' and ')}${decision.version ? ` (version ${decision.version + 1} of the input)` : ''}`,
        }
      : { type: 'tool-approval-response', approvalId: call.approvalId, approved: false, reason: denialReason(decision) };
  });
  return { role: 'tool', content };
}

/**
 * Whether `message` is the tool message that resumed `step` (what `resumeToolMessage` wrote): an
 * approval response to one of its calls or, for a step of questions only (no approval response),
 * a result of one of its questions. Recovery reads it to tell a resume that never finished.
 */
export function isResumeMessageOf(step: PendingStep, message: ModelMessage | undefined): boolean {
  if (message?.role !== 'tool') return false;
  const approvalIds = new Set(step.calls.map((call) => call.approvalId));
  const questionCallIds = new Set(step.calls.filter(isQuestion).map((call) => call.toolCallId));
  return message.content.some(
    (part) => (part.type === 'tool-approval-response' && approvalIds.has(part.approvalId)) || (part.type === 'tool-result' && questionCallIds.has(part.toolCallId)),
  );
}

/**
 * Whether the step's calls were closed when its resume was claimed (`closingToolMessage`: each
 * call's denied result is written beside its response) rather than handed back to the model
 * (`resumeToolMessage`: responses only, for every call that is not a question). Read from the
 * history, not from the step, whose decisions a later recovery may change.
 */
export function closedAtClaim(step: PendingStep, messages: readonly ModelMessage[]): boolean {
  const message = messages.findLast((candidate) => isResumeMessageOf(step, candidate));
  if (message?.role !== 'tool') return false;
  // Denied results only: a resumed turn's recovery may add an approved call's "interrupted" result to it.
  const denied = new Set(message.content.flatMap((part) => (part.type === 'tool-result' && part.output.type === 'execution-denied' ? [part.toolCallId] : [])));
  const calls = step.calls.filter((call) => !isQuestion(call));
  return calls.length > 0 && calls.every((call) => denied.has(call.toolCallId));
}

/**
 * Closes every call of a step that will not resume (a newer message superseded it) with an explicit
 * denied result, so the history stays valid for the next model call and nothing runs later.
 */
export function closingToolMessage(step: PendingStep): ModelMessage {
  const content: ToolContent = [];
  for (const call of step.calls) {
    const decision = decisionFor(step, call);
    if (!isQuestion(call)) content.push({ type: 'tool-approval-response', approvalId: call.approvalId, approved: false, reason: denialReason(decision) });
    content.push(deniedResult(call, isQuestion(call) ? questionClosedReason(decision) : denialReason(decision)));
  }
  return { role: 'tool', content };
}

function answerResult(call: PendingCall, decision: Decision): ToolResultPart {
  return {
    type: 'tool-result',
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    output: { type: 'json', value: toJsonValue({ answeredBy: `<@${decision.userId}>`, answer: decision.answer ?? null }) },
  };
}

function deniedResult(call: PendingCall, reason: string): ToolResultPart {
  return { type: 'tool-result', toolCallId: call.toolCallId, toolName: call.toolName, output: { type: 'execution-denied', reason } };
}

function decisionFor(step: PendingStep, call: PendingCall): Decision {
  return step.decisions[call.approvalId] ?? { outcome: 'superseded', userId: step.requesterId, at: step.createdAt };
}

function toJsonValue(value: unknown): never {
  return JSON.parse(JSON.stringify(value ?? null)) as never;
}
