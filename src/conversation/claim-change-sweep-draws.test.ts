import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { ModelMessage } from 'ai';
import { click, createTestDecider, DECIDER_CONFIG, stepFor } from '../approvals/decide-call.test-support.js';
import type { PendingStep } from '../approvals/pending-step.js';
import { createMemoryAuditLog } from '../audit/memory-audit-log.js';
import { createMemoryStore } from '../store/memory-store.js';
import { newStepId } from '../store/redis-keys.js';
import type { StateStore } from '../store/state-store.js';
import { newThreadState } from '../store/thread-state.js';
import type { ToolDefinition } from '../tools/tool-definition.js';
import { SWEEP_SHOWS_AFTER_MS } from './card-after-write.js';
import { createLease } from './lease.js';
import { createStepResumer } from './resume-step.js';
import type { ThreadMessenger } from './thread-messenger.js';
import { createTurnScope } from './turn-scope.js';

const logger = pino({ level: 'silent' });
const limits = { historyTtlMs: 60_000, maxMessages: 100, maxBytes: 1_000_000 };
const scaleTool: ToolDefinition = { name: 'scale', description: 'Scale a deployment', inputSchema: {} as ToolDefinition['inputSchema'], execute: async () => 'scaled' };

/** A `scale` call awaiting approval, stored as a turn stores it: the thread's history ends with the model's call. */
async function storeScaleStep(store: StateStore): Promise<PendingStep> {
  const opened = stepFor('scale', { threadTs: `${Math.floor(Date.now() / 1000)}.000100` });
  const step = { ...opened, stepId: newStepId(opened.threadKey) };
  const asked: ModelMessage = {
    role: 'assistant',
    content: [
      { type: 'tool-call', toolCallId: 'call_0', toolName: 'scale', input: { namespace: 'staging' } },
      { type: 'tool-approval-request', approvalId: 'apv1', toolCallId: 'call_0' },
    ],
  };
  const token = (await store.tryLock(step.threadKey, 60_000))!;
  const thread = { ...newThreadState(step, 1), pendingStepId: step.stepId, messages: [{ role: 'user', content: 'scale staging' } as ModelMessage, asked] };
  await store.createStep({ step, thread, ttlMs: 60_000, audit: [], fence: { threadKey: step.threadKey, token } });
  await store.releaseLockIfIdle({ threadKey: step.threadKey, token }, 60_000);
  return step;
}

/**
 * A decision's draw of a decided step reads nothing after it (`mayChangeUnseen`), so when the
 * resume runs in another process, whose claim closes a call (its tool gone since a deploy, its
 * approval revoked) and draws that, the decision's "Approved by …" may land over it for good. The
 * claim that changed the step has the sweep draw it again once such a draw has landed.
 */
describe("a resume's claim", () => {
  async function claimApproved(tools: ToolDefinition[]) {
    const store = createMemoryStore();
    const step = await storeScaleStep(store);
    await store.setStepCard(step.stepId, 'card-1');
    const { decider } = createTestDecider({ store });
    const outcome = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }));
    if (!outcome.recorded || !outcome.claim) throw new Error('the approval should complete the step and take the thread');
    // The decision's draw is left on its way (no `publish`): the claim runs first.
    const drawn: PendingStep[] = [];
    const messenger = { updateStepCard: async ({ step: shown }: { step: PendingStep }) => void drawn.push(shown) } as unknown as ThreadMessenger;
    const lease = createLease({ store, fence: { threadKey: step.threadKey, token: outcome.claim.token }, heldUntil: () => Date.now() + 60_000 });
    const scope = createTurnScope({ store, messenger, lease, limits, now: Date.now, takeBacks: { takeBack: async () => {} } });
    const ran: string[] = [];
    const unused = async () => {
      throw new Error('not reached');
    };
    const resumer = createStepResumer({
      store,
      audit: createMemoryAuditLog({ logger }),
      logger,
      now: Date.now,
      policy: DECIDER_CONFIG.policy,
      tools,
      resolveGroups: async () => new Map(),
      loadThread: unused,
      runAndPublish: async (_scope, _thread, requesterId) => void ran.push(requesterId),
      closeInterruptedCalls: async () => {},
      cards: { postUnpostedCard: async () => false },
    });
    const claimedAt = Date.now();
    await resumer.resume(scope, step.stepId);
    const due = async (at: number) => (await store.dueCardRefreshes({ now: at, limit: 10 })).map((refresh) => refresh.stepId);
    return { stepId: step.stepId, ran, drawn, dueNow: await due(Date.now()), dueLater: await due(claimedAt + SWEEP_SHOWS_AFTER_MS + 1_000) };
  }

  it('that closed a call draws it, and has the sweep draw it again later', async () => {
    const { stepId, drawn, dueNow, dueLater } = await claimApproved([]);
    expect(drawn.map((shown) => Object.values(shown.decisions).map((decision) => decision.outcome))).toEqual([['denied']]);
    expect(dueNow).toEqual([]);
    expect(dueLater).toEqual([stepId]);
  });

  it('that changed nothing draws nothing and keeps nothing for the sweep: the decision drew it', async () => {
    const { ran, drawn, dueLater } = await claimApproved([scaleTool]);
    expect(ran).toHaveLength(1);
    expect(drawn).toEqual([]);
    expect(dueLater).toEqual([]);
  });
});
