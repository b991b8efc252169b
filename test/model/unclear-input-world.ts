import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { z } from 'zod';
import { createToolApproval, createTurnTools, type ApprovedRun, type AutomaticApproval, type ExecutionRecord, type GateBasis } from '../../src/agent/tool-set.js';
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
import { createExecutionRecords } from '../../src/conversation/execution-records.js';
import { createGrantLookup } from '../../src/conversation/grant-lookup.js';
import type { Lease } from '../../src/conversation/lease.js';
import { createMessageTakeBacks } from '../../src/conversation/message-take-back.js';
import { createStepResumer } from '../../src/conversation/resume-step.js';
import type { ThreadMessenger } from '../../src/conversation/thread-messenger.js';
import type { ThreadWorker } from '../../src/conversation/thread-worker.js';
import { createTurnScope, type TurnScope } from '../../src/conversation/turn-scope.js';
import { noMetrics } from '../../src/metrics/metrics.js';
import type { StateStore } from '../../src/store/state-store.js';
import { newThreadState, type ThreadState } from '../../src/store/thread-state.js';
import type { ToolDefinition } from '../../src/tools/tool-definition.js';
import { CHANNEL, TEAM } from './countersignature-world.js';
import { GROUPS, type UApprovers, type UInput, type UPolicy, type URule, type USettings } from './unclear-input-model.js';

/**
 * The world for the unclear-input model: one process at a time over a shared store, built from a
 * policy as a deploy would start it, with the bot's own pieces end to end. A new call goes through
 * the bot's approval gate (`createToolApproval`: the policy, a scheduled turn's auto-approve list,
 * the grant lookup); one it lets through runs at once through the turn's tool set (a grant checked
 * again with the executing marker), and one that needs people becomes a step, which the approval
 * hook is asked about first. Clicks go through the decider, expiry through the sweeper, resumes and
 * newer messages through the bot's resumer and its tool set. `ran` is what the tool's own `execute`
 * was called with: the ground truth of what ran, with no check of the world's own.
 */
const LOCK_MS = 60_000;
const TTL_MS = 86_400_000;

const namespace = z.enum(['dev', 'staging', 'prod']);
const schema = z.object({ service: z.string(), namespaces: z.union([z.array(namespace.nullable()), namespace]).nullable().optional() });

function approversYaml(approvers: UApprovers): string {
  switch (approvers.kind) {
    case 'channel':
      return '[channel]';
    case 'requester':
      return '[requester]';
    case 'group':
      return `["group:${GROUPS[approvers.group]}"]`;
    case 'users':
      return `[${approvers.users.join(', ')}]`;
    case 'users+group':
      return `[${approvers.users.join(', ')}, "group:${GROUPS[approvers.group]}"]`;
  }
}

function settingsYaml(settings: USettings, indent: string): string {
  return [
    `approvers: ${approversYaml(settings.approvers)}`,
    `required: ${settings.required}`,
    `allowSelfApproval: ${settings.allowSelfApproval}`,
    `expiry: ${settings.expiryMinutes}m`,
    `autoApprove: ${settings.autoApprove}`,
    `grants: ${settings.grants}`,
  ]
    .map((line) => `${indent}${line}\n`)
    .join('');
}

function ruleYaml(rule: URule): string {
  const condition = rule.condition === undefined ? '' : rule.condition.op === 'equals' ? `{ field: namespaces, equals: ${rule.condition.values[0]} }` : `{ field: namespaces, oneOf: [${rule.condition.values.join(', ')}] }`;
  return (
    `    - name: ${rule.name}\n      tools: [restart]\n` +
    (condition ? `      input: [${condition}]\n` : '') +
    `      approval: ${rule.approval}\n` +
    (rule.approval === 'always' ? settingsYaml(rule, '      ') : '')
  );
}

export function policyYaml(policy: UPolicy): string {
  const rules = [...policy.inputRules, ...(policy.general ? [policy.general] : [])];
  return `policy:\n  defaults:\n${settingsYaml(policy.defaults, '    ')}  rules:\n${rules.map(ruleYaml).join('')}`;
}

export const policyConfigOf = (policy: UPolicy): PolicyConfig => parseConfigFile(policyYaml(policy), 'unclear-input-model.yml').policy;

export type HookVerdict = 'approve' | 'deny' | 'abstain';
/** `notRun`: the gate let the call through, but it did not start (its grant was gone by then). */
export type Proposal = { ran: 'no-approval' | 'schedule' | 'grant'; grantId?: string } | { stepId: string } | { notRun: true };
export interface Execution {
  stepId: string;
  input: unknown;
}

export function createUnclearInputWorld({ store, clock, policy }: { store: StateStore; clock: { now: number }; policy: UPolicy }) {
  const logger = pino({ level: 'silent' });
  const audit = createMemoryAuditLog({ logger });
  const now = () => clock.now;
  const membersOf = (groups: UPolicy['groupMembers']) => new Map(GROUPS.map((id, index) => [id as string, new Set(groups[index]) as ReadonlySet<string>]));
  let members = membersOf(policy.groupMembers);
  const resolveGroups = async (groupIds: readonly string[]) => new Map(groupIds.flatMap((id) => (members.has(id) ? [[id, members.get(id)!] as const] : [])));
  const channelsOf = async () => new Set([CHANNEL]) as ReadonlySet<string>;
  const messenger = new Proxy({}, { get: (_target, name) => (name === 'then' ? undefined : async () => ({ ts: '1.0' })) }) as unknown as ThreadMessenger;
  const worker: ThreadWorker = { submit: async () => {}, pickUp: async () => false, startPickUp: async () => false, room: () => 0, idle: async () => {}, queueing: { mode: 'hand-off', lockTtlMs: LOCK_MS }, claimTaken: <T>(_threadKey: string, claim: T) => claim, drainClaimed: async () => {} };
  const limits = { historyTtlMs: TTL_MS, maxMessages: 500, maxBytes: 10_000_000 };
  const executions: Execution[] = [];
  const ran = new Map<string, unknown>();
  const restart: ToolDefinition = {
    name: 'restart',
    description: 'Restart pods in some namespaces',
    inputSchema: schema,
    approval: 'always',
    execute: async (input: unknown, context: { toolCallId: string }) => {
      ran.set(context.toolCallId, input);
      return { ok: true };
    },
  };
  const tools = [restart];
  const hookAnswer: { next: HookVerdict } = { next: 'abstain' };
  const approvalHook: ApprovalHook = {
    name: 'h1',
    timeoutMs: 5_000,
    decide: () => (hookAnswer.next === 'abstain' ? undefined : hookAnswer.next === 'approve' ? { decision: 'approve' } : { decision: 'deny', reason: 'no' }),
  };
  const records = createExecutionRecords({ store, logger, limits: { ...limits, maxSteps: 10 }, now, metrics: noMetrics });
  const grantLookup = createGrantLookup({ store, resolveGroups, channelsOf, now });

  function scopeFor(threadKey: string, token: string): TurnScope {
    const fence = { threadKey, token };
    const lease: Lease = { fence, signal: new AbortController().signal, assertCurrent: async () => {}, assertHeld: async () => {}, guard: (write) => write(), lost: () => false, stateLost: () => false };
    return createTurnScope({ store, messenger, lease, limits, now, takeBacks: createMessageTakeBacks({ store, messenger, logger, now }) });
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

  function startProcess(next: UPolicy) {
    const config = policyConfigOf(next);
    const currentEvaluation = createCurrentEvaluation({ policy: config, tools });
    const sweeper = createExpirySweeper({ store, messenger, worker, logger, now, currentEvaluation });
    const decider: CallDecider = createCallDecider({ store, messenger, worker, logger, audit, resolveGroups, now, expireNow: (stepId) => sweeper.expireNow(stepId), evaluateInput: currentEvaluation });
    const consultApprovalHook = createApprovalHookConsultation({ store, audit, logger, now, metrics: noMetrics, approvalHook });
    /** The turn a resume runs: each approved call through the bot's tool set, its marker written under the fence; then the thread is saved, settled. */
    const runAndPublish = async (scope: TurnScope, thread: ThreadState, requesterId: string, approvedRuns?: ReadonlyMap<string, ApprovedRun>) => {
      const done: ExecutionRecord[] = [];
      const turnTools = createTurnTools({
        definitions: tools,
        context: { requesterId, teamId: thread.teamId, channel: thread.channel, threadTs: thread.threadTs },
        executions: done,
        messages: thread.messages,
        ...(approvedRuns ? { approvedRuns } : {}),
        bases: new Map(),
        beforeExecute: (call) => records.markStarted(scope, thread, call),
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
      policy: config,
      tools,
      approvalHook,
      resolveGroups,
      loadThread: async (step) => (await store.getThread((step as unknown as { threadKey: string }).threadKey))!,
      runAndPublish: runAndPublish as never,
      closeInterruptedCalls: async () => {},
      cards: { postUnpostedCard: async () => false },
    });
    return { config, sweeper, decider, consultApprovalHook, resumer };
  }

  let process = startProcess(policy);
  let previous: ReturnType<typeof startProcess> | undefined;

  /**
   * A turn's model asks for `input`: the gate decides (no approval needed, the schedule's list, a
   * grant), and a call it lets through runs at once through the tool set; otherwise the turn pauses
   * on a step (stored with the hook's mark, then the hook is asked under the same lock).
   */
  async function propose({ requesterId, threadTs, input, hook, scheduled }: { requesterId: string; threadTs: string; input: UInput; hook: HookVerdict; scheduled: boolean }): Promise<Proposal> {
    const thread = newThreadState({ teamId: TEAM, channel: CHANNEL, threadTs }, now());
    thread.threadKey = `${thread.threadKey}-${randomUUID()}`;
    const context = { requesterId, teamId: TEAM, channel: CHANNEL, threadTs };
    const toolCallId = `c${randomUUID().slice(0, 8)}`;
    const bases = new Map<string, GateBasis>();
    const automatic = new Map<string, AutomaticApproval>();
    const findGrant = grantLookup(thread, requesterId);
    const gate = createToolApproval({
      definitions: tools,
      context,
      policy: process.config,
      bases,
      findGrant,
      onAutomaticApproval: (approval) => automatic.set(approval.toolCallId, approval),
      ...(scheduled ? { scheduleApproval: { schedule: 'nightly', covers: (toolName: string) => toolName === 'restart' } } : {}),
    }) as unknown as (call: { toolCall: { toolCallId: string; toolName: string; input: unknown } }) => Promise<unknown>;
    const verdict = await gate({ toolCall: { toolCallId, toolName: 'restart', input } });
    if (verdict !== 'user-approval') {
      const basis = bases.get(toolCallId)?.basis;
      await holding(thread.threadKey, async (scope) => {
        const turnTools = createTurnTools({
          definitions: tools,
          context,
          executions: [],
          bases,
          automaticApprovals: automatic,
          findGrant,
          beforeExecute: (call) => records.markStarted(scope, thread, call),
        });
        await (turnTools.restart!.execute as unknown as (input: unknown, options: { toolCallId: string; messages: [] }) => Promise<unknown>)(input, { toolCallId, messages: [] }).catch(() => {});
      });
      if (!ran.has(toolCallId)) return { notRun: true };
      const kind = basis?.kind === 'grant' ? 'grant' : basis?.kind === 'auto-approve' ? 'schedule' : 'no-approval';
      return basis?.kind === 'grant' ? { ran: kind, grantId: basis.grantId } : { ran: kind };
    }
    const request = { kind: 'approval' as const, approvalId: `a${randomUUID().slice(0, 8)}`, toolCallId, toolName: 'restart', input };
    thread.messages.push(
      { role: 'user', content: 'restart them' },
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
      policy: process.config,
      definitionOf: (name) => tools.find((tool) => tool.name === name),
      stepId: `s${randomUUID().replaceAll('-', '')}`,
      now: now(),
    });
    const step = { ...built, ...hookDecidingMark({ hook: approvalHook, now: now() }) };
    hookAnswer.next = hook;
    await holding(thread.threadKey, async (scope) => {
      await store.createStep({ step, thread: { ...thread, pendingStepId: step.stepId }, ttlMs: TTL_MS, audit: [], fence: scope.lease.fence });
      await process.consultApprovalHook(scope, step);
    });
    return { stepId: step.stepId };
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
    ran,
    get process() {
      return process;
    },
    /** The process on the config before the last deploy: during a rolling deploy it still takes clicks. */
    get previous() {
      return previous;
    },
    deploy(next: UPolicy) {
      members = membersOf(next.groupMembers);
      previous = process;
      process = startProcess(next);
    },
    propose,
    resume,
    newMessage,
  };
}

export type UnclearInputWorld = ReturnType<typeof createUnclearInputWorld>;
