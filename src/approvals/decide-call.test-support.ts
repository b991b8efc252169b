import { pino } from 'pino';
import { createMemoryAuditLog } from '../audit/memory-audit-log.js';
import { parseConfigFile } from '../config/config-file.js';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import type { ThreadWorker } from '../conversation/thread-worker.js';
import { decodeWorkItem, type WorkItem } from '../conversation/work-item.js';
import { newStepId } from '../store/redis-keys.js';
import type { StateStore, WorkClaim } from '../store/state-store.js';
import { newThreadState } from '../store/thread-state.js';
import { createCallDecider, type CallDecisionRequest, type DecideCallOptions } from './decide-call.js';
import type { PendingStep } from './pending-step.js';
import { makeStep } from './pending-step.test-support.js';
import { evaluatePolicy } from './policy/evaluate-policy.js';

/**
 * The policy a test decider decides under: a restart needs two of Alice and the on-call group (Bob), a
 * scale needs Alice.
 */
export const DECIDER_CONFIG = parseConfigFile(
  `
policy:
  rules:
    - name: restarts
      tools: [restart_service]
      approvers: [U0ALICE, "group:S0ONCALL"]
      required: 2
    - name: prod scaling
      tools: [scale]
      approval: always
      approvers: [U0ALICE]
`,
  'test.yml',
);

/**
 * A thread worker that runs nothing: each item it is given lands in `submitted`, whether submitted or
 * drained from a claim. It queues in `drain` mode: the resume is queued with the decision that completes
 * the step, and this process then drains it.
 */
function recordingWorker(submitted: WorkItem[]): ThreadWorker {
  return {
    submit: async (_threadKey: string, item: WorkItem) => void submitted.push(item),
    pickUp: async () => false,
    startPickUp: async () => false,
    room: () => 0,
    idle: async () => {},
    queueing: { mode: 'drain', lockTtlMs: 60_000 },
    claimTaken: (_threadKey, claim) => claim,
    drainClaimed: async (_threadKey: string, claim: WorkClaim) => void submitted.push(decodeWorkItem(claim.item)!),
  };
}

/**
 * A decider over `store` under `DECIDER_CONFIG`, whose messenger draws nothing. An edit's input
 * `{ tool }` is judged as a call of that tool. The resume a completing decision queues lands in
 * `submitted` (see `recordingWorker`). What else the test gives (its own policy's `evaluateInput`, a
 * clock) stands instead of these.
 */
export function createTestDecider(options: { store: StateStore } & Partial<Omit<DecideCallOptions, 'store' | 'worker'>>) {
  const logger = pino({ level: 'silent' });
  const submitted: WorkItem[] = [];
  const decider = createCallDecider({
    messenger: { updateStepCard: async () => {} } as unknown as ThreadMessenger,
    worker: recordingWorker(submitted),
    logger,
    audit: createMemoryAuditLog({ logger }),
    resolveGroups: async () => new Map([['S0ONCALL', new Set(['U0BOB'])]]),
    evaluateInput: async ({ call, input }) => evaluatePolicy({ policy: DECIDER_CONFIG.policy, toolName: (input as { tool?: string }).tool ?? call.toolName, channel: 'C0OPS', input }),
    ...options,
  });
  return { decider, submitted };
}

/**
 * One call of `toolName` awaiting approval `apv1` under `DECIDER_CONFIG`, requested just now by
 * U0REQUESTER: the decider's clock is the real one, and an edit's rule counts its expiry from the request.
 */
export function stepFor(toolName: string, overrides: Partial<PendingStep> = {}): PendingStep {
  const step = makeStep([{ approvalId: 'apv1', input: { namespace: 'staging' }, policy: evaluatePolicy({ policy: DECIDER_CONFIG.policy, toolName, channel: 'C0OPS', input: {} }) }], { requesterId: 'U0REQUESTER', createdAt: Date.now(), ...overrides });
  step.calls[0]!.toolName = toolName;
  return step;
}

/** Stores a step the way a turn does (the store takes new steps only from the thread's lock holder). */
export async function storeStep(store: StateStore, step: PendingStep): Promise<PendingStep> {
  const threadKey = step.threadKey;
  const token = (await store.tryLock(threadKey, 60_000))!;
  await store.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 60_000, audit: [], fence: { threadKey, token } });
  await store.releaseLockIfIdle({ threadKey, token }, 60_000);
  return step;
}

/**
 * `stepFor(toolName)` in a thread opened just now, with a step id of the shape the Redis store makes (it
 * keeps a step by its thread), stored as a turn stores it.
 */
export async function storeStepInNewThread(store: StateStore, toolName: string): Promise<PendingStep> {
  const threadTs = `${Math.floor(Date.now() / 1000)}.000100`;
  const step = stepFor(toolName, { threadTs });
  return storeStep(store, { ...step, stepId: newStepId(step.threadKey) });
}

/** `userId`'s click on the step's `apv1`, from a member of its channel. */
export const click = (step: PendingStep, userId: string, action: CallDecisionRequest['action']): CallDecisionRequest => ({
  stepId: step.stepId,
  approvalId: 'apv1',
  userId,
  origin: { teamId: step.teamId, channel: step.channel, membership: 'member' },
  action,
});
