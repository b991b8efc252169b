import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { z } from 'zod';
import type { ApprovalHook } from '../../src/approvals/approval-hook.js';
import { createCallDecider, type CallDecider } from '../../src/approvals/decide-call.js';
import { createCurrentEvaluation } from '../../src/approvals/evaluate-call-policy.js';
import { createExpirySweeper } from '../../src/approvals/expiry-sweeper.js';
import { supersedeTransition } from '../../src/approvals/transitions/close-step.js';
import { commitTransition } from '../../src/approvals/transitions/commit-transition.js';
import { createMemoryAuditLog } from '../../src/audit/memory-audit-log.js';
import { parseConfigFile } from '../../src/config/config-file.js';
import type { PolicyConfig } from '../../src/config/policy-config-schema.js';
import { buildPendingStep } from '../../src/conversation/build-pending-step.js';
import { createApprovalHookConsultation, hookDecidingMark } from '../../src/conversation/consult-approval-hook.js';
import type { Lease } from '../../src/conversation/lease.js';
import { createStepResumer } from '../../src/conversation/resume-step.js';
import type { ThreadMessenger } from '../../src/conversation/thread-messenger.js';
import type { ThreadWorker } from '../../src/conversation/thread-worker.js';
import { createTurnScope, type TurnScope } from '../../src/conversation/turn-scope.js';
import { createMessageTakeBacks } from '../../src/conversation/message-take-back.js';
import { noMetrics } from '../../src/metrics/metrics.js';
import type { StateStore } from '../../src/store/state-store.js';
import { newThreadState } from '../../src/store/thread-state.js';
import type { ToolDefinition } from '../../src/tools/tool-definition.js';
import { createTurnTools, type ApprovedRun, type ExecutionRecord } from '../../src/agent/tool-set.js';
import { CHANNEL, ONCALL_GROUP, ONCALL_MEMBERS, TEAM, type Input } from './countersignature-world.js';
import type { DConfig, DRule, HookName } from './deploy-model.js';

/**
 * The world for the deploy model: one "process" at a time over a shared store, each built from a
 * config (policy, tool definition, approval hook) as a deploy would start it. A deploy builds a new
 * process over the same store and clock; waiting and decided steps stay where they are. Proposals
 * go through the hook (as a turn that pauses does: the step is stored, then the hook is consulted
 * under the thread's lock), clicks through the decider, expiry through the sweeper, and resumes and
 * newer messages through the bot's own resumer. A run records what ran, with no check of its own.
 */
const LOCK_MS = 60_000;
const TTL_MS = 86_400_000;

const schema = z.object({ service: z.string(), namespace: z.enum(['staging', 'prod']) });
/** The tool as each release defines it: v2 runs something else under the same name and input. `ran`: what it did, by call id. */
function toolsOf(ran: Map<string, unknown>): Record<'v1' | 'v2', ToolDefinition> {
  const execute = async (input: unknown, context: { toolCallId: string }) => {
    ran.set(context.toolCallId, input);
    return { ok: true };
  };
  return {
    v1: { name: 'restart', description: 'Restart a service', inputSchema: schema, approval: 'always', definitionFingerprint: 'kubectl rollout restart', execute },
    v2: { name: 'restart', description: 'Restart a service', inputSchema: schema, approval: 'always', definitionFingerprint: 'kubectl delete pods --all', execute },
  };
}

function ruleYaml(rule: DRule, input?: string): string {
  const approvers = rule.approvers.kind === 'channel' ? '[channel]' : rule.approvers.kind === 'group' ? `["group:${ONCALL_GROUP}"]` : `[${rule.approvers.users.join(', ')}]`;
  return `
    - name: ${rule.name}
      tools: [restart]
${input ? `      input: ${input}\n` : ''}      approval: always
      approvers: ${approvers}
      required: ${rule.required}
      allowSelfApproval: ${rule.allowSelfApproval}
      expiry: ${rule.expiryMinutes}m
      autoApprove: ${rule.autoApprove}`;
}

export function deployPolicyOf(config: Pick<DConfig, 'prod' | 'other'>): PolicyConfig {
  const yaml = `policy:\n  rules:${ruleYaml(config.prod, '[{ field: namespace, equals: prod }]')}${ruleYaml(config.other)}\n`;
  return parseConfigFile(yaml, 'deploy-model.yml').policy;
}

export interface Execution {
  stepId: string;
  input: unknown;
}

export type HookVerdict = 'approve' | 'deny' | 'abstain';

export function createDeployWorld({ store, startAt, config }: { store: StateStore; startAt: number; config: DConfig }) {
  const logger = pino({ level: 'silent' });
  const audit = createMemoryAuditLog({ logger });
  const clock = { now: startAt };
  const now = () => clock.now;
  const resolveGroups = async (groupIds: readonly string[]) => new Map(groupIds.filter((id) => id === ONCALL_GROUP).map((id) => [id, ONCALL_MEMBERS]));
  const messenger = new Proxy({}, { get: (_target, name) => (name === 'then' ? undefined : async () => ({ ts: '1.0' })) }) as unknown as ThreadMessenger;
  const worker: ThreadWorker = { submit: async () => {}, pickUp: async () => false, startPickUp: async () => false, room: () => 0, idle: async () => {}, queueing: { mode: 'hand-off', lockTtlMs: LOCK_MS }, claimTaken: <T>(_threadKey: string, claim: T) => claim, drainClaimed: async () => {} };
  const executions: Execution[] = [];
  /** What the tool's own `execute` was called with, by call id: the ground truth of what ran. */
  const ran = new Map<string, unknown>();
  const TOOLS = toolsOf(ran);
  /** What the hook answers next (set by each proposal). */
  const hookAnswer: { next: HookVerdict } = { next: 'abstain' };
  /** Whether the next resumed turn dies right after its claim. */
  const crash = { next: false };

  function scopeFor(threadKey: string, token: string): TurnScope {
    const fence = { threadKey, token };
    const lease: Lease = { fence, signal: new AbortController().signal, assertCurrent: async () => {}, assertHeld: async () => {}, guard: (write) => write(), lost: () => false, stateLost: () => false };
    return createTurnScope({ store, messenger, lease, limits: { historyTtlMs: TTL_MS, maxMessages: 500, maxBytes: 10_000_000 }, now, takeBacks: createMessageTakeBacks({ store, messenger, logger, now }) });
  }

  /** Runs `work` holding the thread's lock, as a worker does; drops the resume items decisions queued (the test resumes itself). */
  async function holding<T>(threadKey: string, work: (scope: TurnScope) => Promise<T>): Promise<T | undefined> {
    const token = await store.tryLock(threadKey, LOCK_MS);
    if (!token) return undefined;
    try {
      return await work(scopeFor(threadKey, token));
    } finally {
      const fence = { threadKey, token };
      let item = await store.takeWork(fence);
      while (item !== undefined) item = await store.finishWork(fence, item, LOCK_MS);
      await store.releaseLockIfIdle(fence, LOCK_MS);
    }
  }

  /** A process started with `config`: what a deploy brings up. */
  function startProcess(config: DConfig) {
    const policy = deployPolicyOf(config);
    const tools: ToolDefinition[] = config.tool === 'removed' ? [] : [TOOLS[config.tool]];
    const approvalHook: ApprovalHook | undefined =
      config.hook === undefined ? undefined : { name: config.hook, timeoutMs: 5_000, decide: () => (hookAnswer.next === 'abstain' ? undefined : hookAnswer.next === 'approve' ? { decision: 'approve' } : { decision: 'deny', reason: 'no' }) };
    const currentEvaluation = createCurrentEvaluation({ policy, tools });
    const sweeper = createExpirySweeper({ store, messenger, worker, logger, now, currentEvaluation });
    const decider: CallDecider = createCallDecider({ store, messenger, worker, logger, audit, resolveGroups, now, expireNow: (stepId) => sweeper.expireNow(stepId), evaluateInput: currentEvaluation });
    const consultApprovalHook = createApprovalHookConsultation({ store, audit, logger, now, metrics: noMetrics, ...(approvalHook ? { approvalHook } : {}) });
    /**
     * The turn a resume runs: each approved call goes through the bot's own tool set (which answers
     * "not run" for a tool a deploy removed or changed), its executing marker written under the fence
     * just before it starts; then the model answers and the thread is saved, settled. With `crash.next`
     * the process dies before anything ran (after the claim), leaving the resume for another process.
     */
    const runAndPublish = async (scope: TurnScope, thread: Parameters<TurnScope['save']>[0], requesterId: string, approvedRuns?: ReadonlyMap<string, ApprovedRun>) => {
      if (crash.next) {
        crash.next = false;
        throw new Error('the process died after the claim');
      }
      const records: ExecutionRecord[] = [];
      const turnTools = createTurnTools({
        definitions: tools,
        context: { requesterId, teamId: thread.teamId, channel: thread.channel, threadTs: thread.threadTs },
        executions: records,
        messages: thread.messages,
        ...(approvedRuns ? { approvedRuns } : {}),
        bases: new Map(),
        beforeExecute: async (call) => {
          await store.markExecuting({ fence: scope.lease.fence, toolCallId: call.toolCallId, marker: { toolName: call.toolName, input: call.input, startedAt: now() }, ttlMs: TTL_MS, audit: [] });
        },
      });
      for (const [toolCallId, run] of approvedRuns ?? []) {
        const step = await store.getStep(run.basis.stepId);
        const modelInput = step?.calls.find((call) => call.toolCallId === toolCallId)?.input;
        const execute = turnTools[run.toolName]?.execute;
        if (!execute) continue;
        try {
          await (execute as unknown as (input: unknown, options: { toolCallId: string; messages: [] }) => Promise<unknown>)(modelInput, { toolCallId, messages: [] });
        } catch {
          // Not run (or failed): the record says which.
        }
        if (ran.has(toolCallId)) executions.push({ stepId: run.basis.stepId, input: ran.get(toolCallId) });
      }
      thread.messages.push({ role: 'assistant', content: 'Done.' });
      await scope.save(thread, { settled: true });
    };
    const resumer = createStepResumer({
      store,
      audit,
      logger,
      now,
      policy,
      tools,
      ...(approvalHook ? { approvalHook } : {}),
      resolveGroups,
      loadThread: async (step) => (await store.getThread((step as unknown as { threadKey: string }).threadKey))!,
      runAndPublish: runAndPublish as never,
      closeInterruptedCalls: async () => {},
      cards: { postUnpostedCard: async () => false },
    });
    return { config, policy, tools, approvalHook, sweeper, decider, consultApprovalHook, resumer };
  }

  let process = startProcess(config);

  /**
   * A turn pauses on a call: the step (marked while the hook decides, when there is one) and the
   * thread pointing at it, in one write under the thread's lock; then the hook is asked, under the
   * same lock, as `runAndPublish` does before it posts the card.
   */
  async function propose({ requesterId, threadTs, input, hook }: { requesterId: string; threadTs: string; input: Input; hook: HookVerdict }): Promise<string> {
    const thread = newThreadState({ teamId: TEAM, channel: CHANNEL, threadTs }, now());
    thread.threadKey = `${thread.threadKey}-${randomUUID()}`;
    const request = { kind: 'approval' as const, approvalId: `a${randomUUID().slice(0, 8)}`, toolCallId: `c${randomUUID().slice(0, 8)}`, toolName: 'restart', input };
    // What the paused turn recorded: the model's call and the AI SDK's approval request for it.
    thread.messages.push(
      { role: 'user', content: 'restart it' },
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: request.toolCallId, toolName: request.toolName, input },
          { type: 'tool-approval-request', approvalId: request.approvalId, toolCallId: request.toolCallId },
        ],
      },
    );
    const built = await buildPendingStep({
      thread,
      requesterId,
      requests: [request],
      policy: process.policy,
      definitionOf: (name) => process.tools.find((tool) => tool.name === name),
      stepId: `s${randomUUID().replaceAll('-', '')}`,
      now: now(),
    });
    const step = { ...built, ...hookDecidingMark({ hook: process.approvalHook, now: now() }) };
    hookAnswer.next = hook;
    await holding(thread.threadKey, async (scope) => {
      await store.createStep({ step, thread: { ...thread, pendingStepId: step.stepId }, ttlMs: TTL_MS, audit: [], fence: scope.lease.fence });
      await process.consultApprovalHook(scope, step);
    });
    return step.stepId;
  }

  /** A resume work item for the step (its decision's, or the recovery sweep's). */
  async function resume(stepId: string): Promise<Execution[]> {
    const stored = await store.getStep(stepId);
    if (!stored) return [];
    const before = executions.length;
    await holding(stored.threadKey, (scope) => process.resumer.resume(scope, stepId));
    return executions.slice(before);
  }

  /** A newer message in the step's thread: an open card is closed; a decided step is resumed first. */
  async function newMessage(stepId: string, userId: string): Promise<Execution[]> {
    const stored = await store.getStep(stepId);
    if (!stored) return [];
    const before = executions.length;
    await holding(stored.threadKey, async (scope) => {
      const thread = await store.getThread(stored.threadKey);
      if (!thread || thread.pendingStepId !== stepId) return;
      const superseded = await commitTransition(store, stepId, (step) => {
        const transition = supersedeTransition(step, { userId, now: now() });
        return transition && { ...transition, fence: scope.lease.fence };
      });
      if (superseded) {
        delete thread.pendingStepId;
        await scope.save(thread);
        return;
      }
      if (await process.resumer.claimAndResume(scope, thread, stepId)) return;
      delete thread.pendingStepId;
      await scope.save(thread);
    });
    return executions.slice(before);
  }

  return {
    clock,
    store,
    executions,
    get process() {
      return process;
    },
    deploy(next: DConfig) {
      process = startProcess(next);
    },
    propose,
    resume,
    /** A resume whose process dies right after the claim (a deploy's kill, say): another process finishes it later. */
    async resumeAndCrash(stepId: string): Promise<Execution[]> {
      crash.next = true;
      try {
        return await resume(stepId).catch(() => []);
      } finally {
        crash.next = false;
      }
    },
    newMessage,
  };
}

export type DeployWorld = ReturnType<typeof createDeployWorld>;
export type { HookName };
