import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { z } from 'zod';
import { createMemoryAuditLog } from '../../src/audit/memory-audit-log.js';
import { createCallDecider, type CallDecider } from '../../src/approvals/decide-call.js';
import { evaluateCallPolicy } from '../../src/approvals/evaluate-call-policy.js';
import { createExpirySweeper } from '../../src/approvals/expiry-sweeper.js';
import { grantCovers, type Grant } from '../../src/approvals/grant.js';
import type { PolicyEvaluation } from '../../src/approvals/policy/evaluate-policy.js';
import { approverGroupIds } from '../../src/approvals/policy/approver-eligibility.js';
import { supersedeTransition } from '../../src/approvals/transitions/close-step.js';
import { commitTransition } from '../../src/approvals/transitions/commit-transition.js';
import type { PolicyConfig } from '../../src/config/policy-config-schema.js';
import { buildPendingStep } from '../../src/conversation/build-pending-step.js';
import { definitionFingerprintOf } from '../../src/tools/definition-fingerprint.js';
import { judgeRetry } from '../../src/conversation/failed-turn.js';
import { createStepResumer } from '../../src/conversation/resume-step.js';
import type { ThreadMessenger } from '../../src/conversation/thread-messenger.js';
import type { ThreadWorker } from '../../src/conversation/thread-worker.js';
import { createTurnScope, type TurnScope } from '../../src/conversation/turn-scope.js';
import { createMessageTakeBacks } from '../../src/conversation/message-take-back.js';
import type { Lease } from '../../src/conversation/lease.js';
import { revokeGrantAs } from '../../src/slack/listeners/revoke-grant.js';
import type { StateStore } from '../../src/store/state-store.js';
import { newThreadState } from '../../src/store/thread-state.js';
import type { ToolDefinition } from '../../src/tools/tool-definition.js';
import { CHANNEL, ONCALL_GROUP, ONCALL_MEMBERS, TEAM, type Input } from './countersignature-world.js';

/**
 * The model-based test's world, extended: the approving group's membership changes and Slack can
 * fail to answer for it (clicks, grant lookups, the re-check at resume); resumes and newer
 * messages go through the bot's own resumer (`createStepResumer`: claim, re-check, wait for the
 * groups or close unchecked approvals, run); a call a grant let through is queued and starts later
 * through the executing-marker write that checks its grant, so a revoke can land in between.
 */
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

interface QueuedCall {
  id: number;
  toolCallId: string;
  threadKey: string;
  requesterId: string;
  threadTs: string;
  input: Input;
  grantId: string;
  evaluation: PolicyEvaluation;
}

const LOCK_MS = 60_000;
const TTL_MS = 86_400_000;

/** `clock`: the world's time, which is also its store's (see the model tests' store factories), as one Redis's is every replica's. */
export function createExtendedWorld({ store, policy, clock }: { store: StateStore; policy: PolicyConfig; clock: { now: number } }) {
  const logger = pino({ level: 'silent' });
  const audit = createMemoryAuditLog({ logger });
  const now = () => clock.now;
  /** The approving group as Slack has it, and whether Slack answers for it. */
  const groups = { readable: true, members: new Set(ONCALL_MEMBERS) };
  const resolveGroups = async (groupIds: readonly string[]) =>
    new Map(groupIds.filter((id) => id === ONCALL_GROUP && groups.readable).map((id) => [id, new Set(groups.members) as ReadonlySet<string>]));
  const notices: string[] = [];
  const messenger = new Proxy(
    {},
    {
      get: (_target, name) =>
        name === 'then'
          ? undefined
          : async (options: { text?: string }) => {
              if (name === 'postNotice' && options?.text) notices.push(options.text);
              return { ts: '1.0' };
            },
    },
  ) as unknown as ThreadMessenger;
  const worker: ThreadWorker = { submit: async () => {}, pickUp: async () => false, startPickUp: async () => false, room: () => 0, idle: async () => {}, queueing: { mode: 'hand-off', lockTtlMs: LOCK_MS }, claimTaken: <T>(_threadKey: string, claim: T) => claim, drainClaimed: async () => {} };
  const sweeper = createExpirySweeper({ store, messenger, worker, logger, now });
  const context = (requesterId: string, threadTs: string) => ({ requesterId, teamId: TEAM, channel: CHANNEL, threadTs });
  const evaluate = (input: unknown, requesterId: string, threadTs: string) =>
    evaluateCallPolicy({ policy, definition: restart, toolName: 'restart', input, context: context(requesterId, threadTs) });
  const decider: CallDecider = createCallDecider({
    store,
    messenger,
    worker,
    logger,
    audit,
    resolveGroups,
    now,
    expireNow: (stepId) => sweeper.expireNow(stepId),
    evaluateInput: ({ step, input }) => evaluate(input, step.requesterId, step.threadTs),
  });
  const executions: Execution[] = [];
  const queued: QueuedCall[] = [];
  let nextQueued = 0;

  function scopeFor(threadKey: string, token: string): TurnScope {
    const fence = { threadKey, token };
    const lease: Lease = {
      fence,
      signal: new AbortController().signal,
      assertCurrent: async () => {},
      assertHeld: async () => {},
      guard: (write) => write(),
      lost: () => false,
      stateLost: () => false,
    };
    return createTurnScope({ store, messenger, lease, limits: { historyTtlMs: TTL_MS, maxMessages: 500, maxBytes: 10_000_000 }, now, takeBacks: createMessageTakeBacks({ store, messenger, logger, now }) });
  }

  /**
   * The turn a resume runs: every approved call starts (its executing marker under the fence) and
   * runs with the approved input; then the model answers and the thread is saved, settled.
   */
  const runAndPublish = async (scope: TurnScope, thread: Parameters<TurnScope['save']>[0], _requesterId: string, approvedRuns?: ReadonlyMap<string, { input: unknown; basis: { stepId: string } }>) => {
    for (const [toolCallId, run] of approvedRuns ?? []) {
      await store.markExecuting({ fence: scope.lease.fence, toolCallId, marker: { toolName: 'restart', input: run.input, startedAt: now() }, ttlMs: TTL_MS, audit: [] });
      executions.push({ stepId: run.basis.stepId, input: run.input, via: 'approval' });
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
    tools: [restart],
    resolveGroups,
    // Each step has its own thread key (see createStep), so the resumer loads the thread by it.
    loadThread: async (step) => (await store.getThread((step as unknown as { threadKey: string }).threadKey))!,
    runAndPublish: runAndPublish as never,
    closeInterruptedCalls: async () => {},
    // Its turns only answer: no step is ever left without its card.
    cards: { postUnpostedCard: async () => false },
  });

  /** Runs `work` holding the thread's lock, as a worker does; false when another holds it. */
  async function holding<T>(threadKey: string, work: (scope: TurnScope) => Promise<T>): Promise<T | undefined> {
    const token = await store.tryLock(threadKey, LOCK_MS);
    if (!token) return undefined;
    try {
      return await work(scopeFor(threadKey, token));
    } finally {
      // The resume items decisions queued are this world's to drop: the model runs resumes itself.
      const fence = { threadKey, token };
      let item = await store.takeWork(fence);
      while (item !== undefined) item = await store.finishWork(fence, item, LOCK_MS);
      await store.releaseLockIfIdle(fence, LOCK_MS);
    }
  }

  async function findGrant(call: { input: Input; requesterId: string; threadTs: string; evaluation: PolicyEvaluation; grantId?: string }): Promise<Grant | undefined> {
    const groupMembers = await resolveGroups(approverGroupIds(call.evaluation));
    const grants = await store.listGrants({ teamId: TEAM, channel: CHANNEL, hideEndedBy: now() });
    // Nobody leaves the channel in this world.
    const everyoneInChannel = () => true;
    const fingerprint = await definitionFingerprintOf(restart);
    return grants.find(
      (grant) =>
        (call.grantId === undefined || grant.grantId === call.grantId) &&
        grantCovers(grant, { toolName: 'restart', channel: CHANNEL, threadTs: call.threadTs, input: call.input, evaluation: call.evaluation, definitionFingerprint: fingerprint, requesterId: call.requesterId, groupMembers, inChannel: everyoneInChannel, now: now() }),
    );
  }

  /** The gate for a new call: a covering grant lets it through (it starts later); otherwise it becomes a step. */
  async function propose({ requesterId, threadTs, input }: { requesterId: string; threadTs: string; input: Input }): Promise<{ queued: number } | { stepId: string }> {
    if (input.service === 'ask') return { stepId: await createStep({ requesterId, threadTs, input: { question: 'Which region?' }, kind: 'question' }) };
    const evaluation = await evaluate(input, requesterId, threadTs);
    const grant = await findGrant({ input, requesterId, threadTs, evaluation });
    if (grant) {
      const id = nextQueued++;
      const threadKey = newThreadState({ teamId: TEAM, channel: CHANNEL, threadTs }, now()).threadKey;
      queued.push({ id, toolCallId: `g${randomUUID().slice(0, 8)}`, threadKey: `${threadKey}-q${id}`, requesterId, threadTs, input, grantId: grant.grantId, evaluation });
      return { queued: id };
    }
    return { stepId: await createStep({ requesterId, threadTs, input, kind: 'approval' }) };
  }

  /**
   * A call the gate let through on a grant starts, as the tool set starts it: the grant is looked
   * up again, then the executing marker is written with the grant checked in the same write.
   */
  async function startQueued(id: number): Promise<'ran' | 'not-run' | 'unknown'> {
    const call = queued.find((candidate) => candidate.id === id);
    if (!call) return 'unknown';
    queued.splice(queued.indexOf(call), 1);
    const result = await holding(call.threadKey, async (scope) => {
      const still = await findGrant({ ...call, grantId: call.grantId });
      if (!still) return 'not-run' as const;
      const marked = await store.markExecuting({
        fence: scope.lease.fence,
        toolCallId: call.toolCallId,
        marker: { toolName: 'restart', input: call.input, startedAt: now() },
        ttlMs: TTL_MS,
        audit: [],
        grant: { teamId: TEAM, channel: CHANNEL, grantId: call.grantId },
      });
      if (marked !== 'marked') return 'not-run' as const;
      // And again after the marker, as the tool set does.
      if (!(await findGrant({ ...call, grantId: call.grantId }))) return 'not-run' as const;
      executions.push({ stepId: `grant:${call.grantId}`, input: call.input, via: 'grant' });
      return 'ran' as const;
    });
    return result ?? 'not-run';
  }

  /** `/countersign grants` → Revoke, by `userId`, of the live grant `grantId`. */
  async function revoke(grantId: string, userId: string): Promise<boolean> {
    const grant = (await store.listGrants({ teamId: TEAM, channel: CHANNEL })).find((candidate) => candidate.grantId === grantId);
    if (!grant) return false;
    return (await revokeGrantAs({ store, audit, logger, resolveGroups }, { grant, userId, membership: 'member' })).revoked;
  }

  /** What a turn that pauses does: the step and the thread pointing at it, in one write under the thread's lock. */
  async function createStep({ requesterId, threadTs, input, kind }: { requesterId: string; threadTs: string; input: unknown; kind: 'approval' | 'question' }): Promise<string> {
    const thread = newThreadState({ teamId: TEAM, channel: CHANNEL, threadTs }, now());
    // Each step its own thread (a suffix of the thread ts keeps the key in its channel's shard).
    thread.threadKey = `${thread.threadKey}-${randomUUID()}`;
    const step = await buildPendingStep({
      thread,
      requesterId,
      requests: [{ kind, approvalId: `a${randomUUID().slice(0, 8)}`, toolCallId: `c${randomUUID().slice(0, 8)}`, toolName: kind === 'approval' ? 'restart' : 'ask_user', input }],
      policy,
      definitionOf: (name) => (name === 'restart' ? restart : undefined),
      stepId: `s${randomUUID().replaceAll('-', '')}`,
      now: now(),
    });
    thread.messages.push({ role: 'user', content: 'restart it' });
    const token = (await store.tryLock(thread.threadKey, LOCK_MS))!;
    await store.createStep({ step, thread: { ...thread, pendingStepId: step.stepId }, ttlMs: TTL_MS, audit: [], fence: { threadKey: thread.threadKey, token } });
    await store.releaseLockIfIdle({ threadKey: thread.threadKey, token }, LOCK_MS);
    return step.stepId;
  }

  /** A resume work item for the step (queued by its last decision, or offered again by the recovery sweep). */
  async function resume(stepId: string): Promise<Execution[]> {
    const stored = await store.getStep(stepId);
    if (!stored) return [];
    const before = executions.length;
    await holding(stored.threadKey, (scope) => resumer.resume(scope, stepId));
    return executions.slice(before);
  }

  /** A newer message in the step's thread: an open card is closed; a decided step is resumed first (no waiting). */
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
      if (await resumer.claimAndResume(scope, thread, stepId)) return;
      delete thread.pendingStepId;
      await scope.save(thread);
    });
    return executions.slice(before);
  }

  return { clock, groups, decider, sweeper, propose, startQueued, revoke, resume, newMessage, executions, queued, notices, store, judgeRetry };
}

export type ExtendedWorld = ReturnType<typeof createExtendedWorld>;
