import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { PendingStep } from '../approvals/pending-step.js';
import { CHANNEL, CREATED_AT, evaluation, makeStep } from '../approvals/pending-step.test-support.js';
import type { CurrentEvaluation } from '../approvals/policy/governing-policy.js';
import { createMemoryAuditLog } from '../audit/memory-audit-log.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { StateStore } from '../store/state-store.js';
import { newThreadState } from '../store/thread-state.js';
import { readHomeContent } from './home-content.js';

const logger = pino({ level: 'silent' });
const bobOnly = evaluation({ approvers: [{ kind: 'user', userId: 'UBOB' }] });

/** Stores a step the way a turn does (the store takes new steps only from the thread's lock holder). */
async function save(store: StateStore, step: PendingStep): Promise<void> {
  const { threadKey } = step;
  const token = (await store.tryLock(threadKey, 60_000))!;
  await store.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 60_000, audit: [], fence: { threadKey, token } });
  await store.releaseLockIfIdle({ threadKey, token }, 60_000);
}

const step = (approvalId: string, threadTs: string, overrides: Partial<PendingStep> = {}) => {
  const channel = overrides.channel ?? CHANNEL;
  return makeStep([{ approvalId, policy: bobOnly }], { threadTs, threadKey: `T0TEAM:${channel}:${threadTs}`, ...overrides });
};

describe('readHomeContent', () => {
  it('asks the config in force once per open call in the viewer\'s channels, and leaves out a call whose evaluation throws without failing the view', async () => {
    const audit = createMemoryAuditLog({ logger });
    const store = createMemoryStore({ audit });
    await save(store, step('fine', '1700000000.000100'));
    await save(store, step('broken', '1700000000.000200'));
    await save(store, step('elsewhere', '1700000000.000300', { channel: 'C0ELSEWHERE' }));
    await save(store, step('expired', '1700000000.000400', { expiresAt: CREATED_AT }));
    const asked: string[] = [];
    const currentEvaluation: CurrentEvaluation = async ({ call }) => {
      asked.push(call.approvalId);
      if (call.approvalId === 'broken') throw new Error("the tool's approval rule failed");
      return bobOnly;
    };
    const content = await readHomeContent(
      { store, audit, resolveGroups: async () => new Map(), channelsOf: async () => new Set([CHANNEL]), currentEvaluation, logger, now: () => CREATED_AT },
      { linkTo: async () => undefined, teamId: 'T0TEAM', userId: 'UBOB' },
    );
    expect(content.waiting.items.map(({ call }) => call.approvalId)).toEqual(['fine']);
    expect(asked.sort()).toEqual(['broken', 'fine']);
  });
});
