import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { pino } from 'pino';
import { z } from 'zod';
import { approvedRunsFor } from '../../src/agent/approved-runs.js';
import { createMemoryAuditLog } from '../../src/audit/memory-audit-log.js';
import { createCallDecider, type CallDecider } from '../../src/approvals/decide-call.js';
import { evaluateCallPolicy } from '../../src/approvals/evaluate-call-policy.js';
import { createExpirySweeper } from '../../src/approvals/expiry-sweeper.js';
import { grantCovers } from '../../src/approvals/grant.js';
import type { CurrentEvaluation } from '../../src/approvals/policy/governing-policy.js';
import { recheckApprovals } from '../../src/approvals/recheck-approvals.js';
import { claimResumeTransition, supersedeTransition } from '../../src/approvals/transitions/close-step.js';
import { commitTransition } from '../../src/approvals/transitions/commit-transition.js';
import { parseConfigFile } from '../../src/config/config-file.js';
import type { PolicyConfig } from '../../src/config/policy-config-schema.js';
import { buildPendingStep } from '../../src/conversation/build-pending-step.js';
import { definitionFingerprintOf } from '../../src/tools/definition-fingerprint.js';
import { judgeRetry } from '../../src/conversation/failed-turn.js';
import type { ThreadMessenger } from '../../src/conversation/thread-messenger.js';
import type { ThreadWorker } from '../../src/conversation/thread-worker.js';
import type { StateStore } from '../../src/store/state-store.js';
import { newThreadState } from '../../src/store/thread-state.js';
import type { ToolDefinition } from '../../src/tools/tool-definition.js';

/**
 * A small world for the model-based test of the countersignature: five people, one on-call group,
 * one tool whose input picks a rule (prod or not), a clock, and the real decision code over a real
 * store. The reference model in `countersignature-model.ts` knows none of this code.
 */
export const TEAM = 'T0TEAM';
export const CHANNEL = 'C0OPS';
export const USERS = ['U0ALICE', 'U0BOB', 'U0CAROL', 'U0DAVE', 'U0ERIN'] as const;
export const ONCALL_GROUP = 'S0ONCALL';
export const ONCALL_MEMBERS: ReadonlySet<string> = new Set(['U0BOB', 'U0CAROL']);
export const THREADS = ['1700000000.000100', '1700000000.000200'] as const;

export type Input = { service: string; namespace: 'staging' | 'prod' };
export const INPUTS: readonly Input[] = ['worker', 'api'].flatMap((service) => (['staging', 'prod'] as const).map((namespace) => ({ service, namespace })));

export type ApproverChoice = { kind: 'channel' } | { kind: 'group' } | { kind: 'users'; users: string[] };
export interface RuleSpec {
  approvers: ApproverChoice;
  required: number;
  allowSelfApproval: boolean;
  expiryMinutes: number;
  grants: 'allowed' | 'identicalArguments' | 'forbidden';
}
export interface PolicySpec {
  prod: RuleSpec;
  other: RuleSpec;
}

const ruleSpec: fc.Arbitrary<RuleSpec> = fc.record({
  approvers: fc.oneof(
    fc.constant({ kind: 'channel' } as const),
    fc.constant({ kind: 'group' } as const),
    fc.subarray([...USERS], { minLength: 3, maxLength: 3 }).map((users) => ({ kind: 'users' as const, users })),
  ),
  required: fc.constantFrom(1, 1, 2, 3),
  allowSelfApproval: fc.boolean(),
  expiryMinutes: fc.integer({ min: 2, max: 20 }),
  grants: fc.constantFrom('allowed', 'allowed', 'identicalArguments', 'forbidden'),
});

export const policySpec: fc.Arbitrary<PolicySpec> = fc.record({ prod: ruleSpec, other: ruleSpec });

function ruleYaml(name: string, rule: RuleSpec, input?: string): string {
  const approvers = rule.approvers.kind === 'channel' ? '[channel]' : rule.approvers.kind === 'group' ? `["group:${ONCALL_GROUP}"]` : `[${rule.approvers.users.join(', ')}]`;
  return `
    - name: ${name}
      tools: [restart]
${input ? `      input: ${input}\n` : ''}      approval: always
      approvers: ${approvers}
      required: ${rule.required}
      allowSelfApproval: ${rule.allowSelfApproval}
      expiry: ${rule.expiryMinutes}m
      grants: ${rule.grants}`;
}

export function policyOf(spec: PolicySpec): PolicyConfig {
  const yaml = `policy:\n  rules:${ruleYaml('prod', spec.prod, '[{ field: namespace, equals: prod }]')}${ruleYaml('other', spec.other)}\n`;
  return parseConfigFile(yaml, 'model.yml').policy;
}

const restart: ToolDefinition = {
  name: 'restart',
  description: 'Restart a service',
  inputSchema: z.object({ service: z.string(), namespace: z.enum(['staging', 'prod']) }),
  approval: 'always',
  execute: async () => ({ ok: true }),
};

export interface Execution {
  stepId: string;
  input: unknown;
  via: 'approval' | 'grant';
}

/**
 * The system under test: the decider the Slack listeners call, the sweeper's expiry, and the
 * conversation's supersede, resume (claim, re-check, approved runs) and grant lookup, over `store`.
 * "Running" a call records it in `executions`.
 */
/** `clock`: the world's time, which is also its store's (see the model tests' store factories), as one Redis's is every replica's. */
export function createWorld({ store, policy, clock }: { store: StateStore; policy: PolicyConfig; clock: { now: number } }) {
  const logger = pino({ level: 'silent' });
  const audit = createMemoryAuditLog({ logger });
  const now = () => clock.now;
  const resolveGroups = async (groupIds: readonly string[]) => new Map(groupIds.filter((id) => id === ONCALL_GROUP).map((id) => [id, ONCALL_MEMBERS]));
  const messenger = { updateStepCard: async () => {}, postMention: async () => {} } as unknown as ThreadMessenger;
  // The world resumes steps itself (`resume`): a decision only offers the thread, it takes no lock.
  const worker: ThreadWorker = { submit: async () => {}, pickUp: async () => false, startPickUp: async () => false, room: () => 0, idle: async () => {}, queueing: { mode: 'hand-off', lockTtlMs: 60_000 }, claimTaken: <T>(_threadKey: string, claim: T) => claim, drainClaimed: async () => {} };
  const sweeper = createExpirySweeper({ store, messenger, worker, logger, now });
  const context = (requesterId: string, threadTs: string) => ({ requesterId, teamId: TEAM, channel: CHANNEL, threadTs });
  const evaluateInput: CurrentEvaluation = ({ step, call, input }) =>
    evaluateCallPolicy({ policy, definition: restart, toolName: call.toolName, input, context: context(step.requesterId, step.threadTs) });
  const decider: CallDecider = createCallDecider({ store, messenger, worker, logger, audit, resolveGroups, now, expireNow: (stepId) => sweeper.expireNow(stepId), evaluateInput });
  const executions: Execution[] = [];

  /** The gate for a new call: a covering grant runs it at once; otherwise it becomes a step. */
  async function propose({ requesterId, threadTs, input }: { requesterId: string; threadTs: string; input: Input }): Promise<{ ran: true } | { ran: false; stepId: string }> {
    if (input.service === 'ask') return { ran: false, stepId: await createStep({ requesterId, threadTs, input: { question: 'Which region?' }, kind: 'question' }) };
    const evaluation = await evaluateCallPolicy({ policy, definition: restart, toolName: 'restart', input, context: context(requesterId, threadTs) });
    const groupMembers = await resolveGroups([ONCALL_GROUP]);
    const grants = await store.listGrants({ teamId: TEAM, channel: CHANNEL, hideEndedBy: now() });
    // Nobody leaves the channel in this world.
    const everyoneInChannel = () => true;
    const definitionFingerprint = await definitionFingerprintOf(restart);
    const grant = grants.find((candidate) => grantCovers(candidate, { toolName: 'restart', channel: CHANNEL, threadTs, input, evaluation, definitionFingerprint, requesterId, groupMembers, inChannel: everyoneInChannel, now: now() }));
    if (grant) {
      executions.push({ stepId: `grant:${grant.grantId}`, input, via: 'grant' });
      return { ran: true };
    }
    return { ran: false, stepId: await createStep({ requesterId, threadTs, input, kind: 'approval' }) };
  }

  /** What a turn that pauses does: the step and the thread pointing at it, in one write under the thread's lock. */
  async function createStep({ requesterId, threadTs, input, kind }: { requesterId: string; threadTs: string; input: unknown; kind: 'approval' | 'question' }): Promise<string> {
    const thread = newThreadState({ teamId: TEAM, channel: CHANNEL, threadTs }, now());
    // Each step gets its own thread key, so a stuck lock of one never blocks another.
    thread.threadKey = `${thread.threadKey}:${randomUUID()}`;
    const step = await buildPendingStep({
      thread,
      requesterId,
      requests: [{ kind, approvalId: `a${randomUUID().slice(0, 8)}`, toolCallId: `c${randomUUID().slice(0, 8)}`, toolName: kind === 'approval' ? 'restart' : 'ask_user', input }],
      policy,
      definitionOf: (name) => (name === 'restart' ? restart : undefined),
      stepId: `s${randomUUID().replaceAll('-', '')}`,
      now: now(),
    });
    const token = (await store.tryLock(thread.threadKey, 60_000))!;
    await store.createStep({ step, thread: { ...thread, pendingStepId: step.stepId }, ttlMs: 86_400_000, audit: [], fence: { threadKey: thread.threadKey, token } });
    await store.releaseLockIfIdle({ threadKey: thread.threadKey, token }, 60_000);
    return step.stepId;
  }

  /**
   * What the conversation does with a complete step while it holds the thread: claim the resume,
   * check the approvals again, run what was approved with the version that was approved, and save
   * the thread as no longer waiting on the step (so a later resume item finds nothing to do).
   */
  async function resume(stepId: string): Promise<Execution[]> {
    const stored = await store.getStep(stepId);
    if (!stored) return [];
    const token = await store.tryLock(stored.threadKey, 60_000);
    if (!token) return [];
    const fence = { threadKey: stored.threadKey, token };
    try {
      const thread = await store.getThread(stored.threadKey);
      if (thread?.pendingStepId !== stepId) return [];
      const claimed = await commitTransition(store, stepId, (step) => claimResumeTransition(step, fence));
      if (!claimed) return [];
      const { step } = await recheckApprovals({ step: claimed, resolveGroups, currentEvaluation: evaluateInput, now: now() });
        const ran = [...approvedRunsFor(step).values()].map((run): Execution => ({ stepId, input: run.input, via: 'approval' }));
      executions.push(...ran);
      delete thread.pendingStepId;
      await store.saveThread(thread, 86_400_000, fence, { settled: true });
      return ran;
    } finally {
      await store.releaseLockIfIdle(fence, 60_000);
    }
  }

  async function supersede(stepId: string, userId: string): Promise<void> {
    await commitTransition(store, stepId, (step) => supersedeTransition(step, { userId, now: now() }));
  }

  return { clock, decider, sweeper, propose, resume, supersede, executions, store, judgeRetry };
}

export type World = ReturnType<typeof createWorld>;
