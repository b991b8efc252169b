import { describeChanges, diffInputs } from '../approvals/input-diff.js';
import { approvedVersion, inputHash } from '../approvals/input-version.js';
import type { PendingStep } from '../approvals/pending-step.js';
import type { ModelMessage } from 'ai';
import type { ApprovedRun } from './tool-set.js';
import { approvedCallsAwaitingRun } from './unavailable-tools.js';

/**
 * The calls of a resumed step that humans approved, with the version each quorum approved: the
 * only input those calls may run with. A call whose record does not hold together is left out,
 * so it cannot run.
 */
export function approvedRunsFor(step: PendingStep): Map<string, ApprovedRun> {
  const runs = new Map<string, ApprovedRun>();
  for (const call of step.calls) {
    const version = approvedVersion(step, call);
    const decision = step.decisions[call.approvalId];
    if (!version || !decision) continue;
    const editors = [...new Set((call.versions ?? []).slice(1, version.number + 1).flatMap((each) => (each.editedBy ? [`<@${each.editedBy}>`] : [])))];
    const changes = describeChanges(diffInputs(call.input, version.input));
    runs.set(call.toolCallId, {
      toolName: call.toolName,
      modelInputHash: inputHash(call.input),
      input: version.input,
      inputHash: version.inputHash,
      ...(Object.hasOwn(version, 'submittedInput') ? { submittedInput: version.submittedInput } : {}),
      ...(call.definitionFingerprint === undefined ? {} : { definitionFingerprint: call.definitionFingerprint }),
      basis: { kind: 'approval', stepId: step.stepId, approvalId: call.approvalId, version: version.number, inputHash: version.inputHash, approvedBy: decision.approvedBy ?? [] },
      ...(version.number > 0 && changes.length > 0
        ? {
            edit: {
              version: version.number,
              editedBy: editors,
              changes,
              ranWithInput: version.input,
              note: `${editors.join(' and ')} changed this call's arguments before it was approved. It ran with ranWithInput, not with the arguments in your call; the changes are listed. Do not re-issue your original call unless the user asks.`,
            },
          }
        : {}),
    });
  }
  return runs;
}

/**
 * The approved runs a history would still replay: their calls are approved in its last message and
 * have no result there. A turn that fails keeps them for Try again. One whose executing marker was
 * written is among them until Try again closes it as interrupted, which it does before anything
 * replays the history, so it never runs twice.
 */
export function approvedRunsAwaiting(options: { runs: ReadonlyMap<string, ApprovedRun>; messages: readonly ModelMessage[] }): Map<string, ApprovedRun> {
  const awaiting = new Set(approvedCallsAwaitingRun(options.messages).map((call) => call.toolCallId));
  return new Map([...options.runs].filter(([toolCallId]) => awaiting.has(toolCallId)));
}
