import { COUNTERSIGN_ACTOR } from '../agent/decision-messages.js';
import type { ApprovalRequest } from '../agent/run-turn.js';
import { evaluateCallPolicy } from '../approvals/evaluate-call-policy.js';
import { modelVersion } from '../approvals/input-version.js';
import { PENDING_STEP_SCHEMA_VERSION, type Decision, type PendingCall, type PendingStep, type StepEscalation } from '../approvals/pending-step.js';
import { approvalDeadlines } from '../approvals/policy/approval-deadlines.js';
import { ladderRuleOf } from '../approvals/policy/escalation-scope.js';
import { nextHopAt } from '../approvals/policy/next-hop-at.js';
import { UNAPPROVABLE_INPUT_TEXT, unapprovableInput } from '../approvals/policy/unapprovable-input.js';
import type { PolicyConfig } from '../config/policy-config-schema.js';
import type { ThreadState } from '../store/thread-state.js';
import { definitionFingerprintOf } from '../tools/definition-fingerprint.js';
import type { ToolDefinition } from '../tools/tool-definition.js';
import { scheduleNameOf } from './schedule-actor.js';

/** A card with more calls than this would break Slack's block limits; countersign closes the rest. */
export const MAX_CALLS_PER_CARD = 10;

/**
 * The pending step for the calls a turn paused on. Each approval call keeps the policy evaluated
 * now (later clicks are judged by the rule the card showed); the step expires and reminds at the
 * earliest of its calls' deadlines. A question has a deadline only in a scheduled turn (the
 * policy's default expiry).
 */
export async function buildPendingStep(options: {
  thread: ThreadState;
  requesterId: string;
  requests: readonly ApprovalRequest[];
  policy: PolicyConfig;
  definitionOf: (toolName: string) => ToolDefinition | undefined;
  stepId: string;
  now: number;
}): Promise<PendingStep> {
  const { thread, requesterId, now } = options;
  const context = { requesterId, teamId: thread.teamId, channel: thread.channel, threadTs: thread.threadTs };
  const calls: PendingCall[] = [];
  let expiresAt: number | undefined;
  let remindAt: number | undefined;
  let escalation: Omit<StepEscalation, 'nextAt'> | undefined;
  for (const request of options.requests) {
    const definition = options.definitionOf(request.toolName);
    const call: PendingCall = { ...request, description: definition?.description ?? '' };
    if (request.kind === 'approval') {
      call.policy = await evaluateCallPolicy({ policy: options.policy, definition, toolName: request.toolName, input: request.input, context });
      call.versions = [modelVersion({ input: request.input, policy: call.policy, at: now })];
      // The approval is for the tool as it is now: a deploy that changes what it does voids it (see `createTurnTools`).
      if (definition?.execute) call.definitionFingerprint = await definitionFingerprintOf(definition);
      const deadlines = approvalDeadlines({ evaluation: call.policy, requestedAt: now });
      expiresAt = Math.min(expiresAt ?? Infinity, deadlines.expiresAt);
      if (deadlines.remindAt !== undefined) remindAt = Math.min(remindAt ?? Infinity, deadlines.remindAt);
      // One ladder per step (one card): the first call's that has one. Its hops speak for that call's rule only.
      const ladder = call.policy.needsApproval ? call.policy.escalation : undefined;
      if (escalation === undefined && ladder !== undefined && ladder.length > 0) escalation = { ladder, rule: ladderRuleOf(call.policy), done: 0 };
    } else if (scheduleNameOf(requesterId) !== undefined) {
      // A person's question waits for them (their next message supersedes it); a schedule's has
      // nobody bound to come back, so it expires like an approval would and the model is told.
      expiresAt = Math.min(expiresAt ?? Infinity, now + options.policy.defaults.expiryMs);
    }
    calls.push(call);
  }
  // Timed once the step's expiry is known: the earliest of every call's, which may come before the ladder's first hop.
  const nextAt = escalation === undefined ? undefined : nextHopAt({ at: now + escalation.ladder[0]!.afterMs, expiresAt });
  const decisions: Record<string, Decision> = {};
  for (const overflow of options.requests.slice(MAX_CALLS_PER_CARD)) {
    // Nobody declined these: closed by countersign, so the model hears an error it may ask again about, not a human's no.
    decisions[overflow.approvalId] = {
      outcome: 'denied',
      userId: COUNTERSIGN_ACTOR,
      at: now,
      reason: `at most ${MAX_CALLS_PER_CARD} calls can wait for approval at once; ask for the rest separately`,
    };
  }
  const step: PendingStep = {
    schemaVersion: PENDING_STEP_SCHEMA_VERSION,
    stepId: options.stepId,
    threadKey: thread.threadKey,
    teamId: thread.teamId,
    channel: thread.channel,
    threadTs: thread.threadTs,
    requesterId,
    // Whose answers or deny reasons steered the turn before it asked for these calls: judged like the requester.
    ...(thread.instigatorIds === undefined || thread.instigatorIds.length === 0 ? {} : { instigatorIds: [...thread.instigatorIds] }),
    createdAt: now,
    calls,
    decisions,
    ...(expiresAt === undefined ? {} : { expiresAt }),
    ...(remindAt === undefined ? {} : { remindAt }),
    ...(escalation === undefined ? {} : { escalation: { ...escalation, ...(nextAt === undefined ? {} : { nextAt }) } }),
    phase: 'pending',
    revision: 0,
  };
  // An input that may fall under rules with too few approvers in common would wait on a card nobody
  // can approve: closed at once, so the card says why and the model may split the call. Judged on
  // the step as built (its ladder and expiry), by the people the rules name; one that depends on a
  // group's members is judged at the first click, which reads them.
  for (const call of calls) {
    if (call.policy === undefined || Object.hasOwn(decisions, call.approvalId)) continue;
    if (unapprovableInput({ step, policy: call.policy, groupMembers: new Map() })) decisions[call.approvalId] = { outcome: 'denied', userId: COUNTERSIGN_ACTOR, at: now, reason: UNAPPROVABLE_INPUT_TEXT };
  }
  if (calls.length > 0 && calls.every((call) => Object.hasOwn(decisions, call.approvalId))) step.phase = 'complete';
  return step;
}
