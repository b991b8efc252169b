import { describe, expect, it } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import type { StateStore } from '../../src/store/state-store.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';
import { deferred } from '../helpers/deferred.js';
import { stallable } from '../helpers/stalling-store.js';

/**
 * The approval hook approves every call of a step, so the turn resumes at once, inside the same
 * work item (the mention's: `resumeDecided`). Its process stalls right after the resume's claim
 * (a GC pause, a frozen VM) past its lock; a replica takes the mention's item over.
 *
 * README: "Calls that never started still run after recovery, once their approvals are checked
 * again"; and the hook's approval is "judged again … when another process finishes a resume whose
 * process stopped before the call started". The approved call never started, so the replica must
 * run it once. With NO_STALL=1 the same scenario runs without the stall (a control, which passes).
 */
const harness = useHarnesses();

describe('a turn the approval hook resumed inline, its process stalling right after the claim', () => {
  it('the hook-approved call still runs once, on the process that took the thread over', async () => {
    const control = { stalling: false, stalled: deferred(), released: deferred() };
    let built = 0;
    const wrapStore = (store: StateStore): StateStore => {
      built += 1;
      if (built > 1) return store;
      const stall = async () => {
        if (control.stalling) await control.released.promise;
      };
      return stallable(stall, {
        ...store,
        async commitStepWithThread(options) {
          await stall();
          const result = await store.commitStepWithThread(options);
          if (result === 'committed' && process.env.NO_STALL) control.stalled.resolve();
          else if (result === 'committed') {
            control.stalling = true;
            control.stalled.resolve();
            await control.released.promise;
          }
          return result;
        },
        async extendLock(fence, ttlMs) {
          await stall();
          return store.extendLock(fence, ttlMs);
        },
        async saveThread(...args) {
          await stall();
          return store.saveThread(...args);
        },
        async markExecuting(...args) {
          await stall();
          return store.markExecuting(...args);
        },
        async fenceState(...args) {
          await stall();
          return store.fenceState(...args);
        },
        async finishWork(...args) {
          await stall();
          return store.finishWork(...args);
        },
      });
    };
    const h = await harness({
      environment: { COUNTERSIGN_LOCK_TTL_MS: '1000' },
      sweepIntervalMs: 100,
      wrapStore,
      onApprovalRequest: { name: 'runbook', decide: () => ({ decision: 'approve' }) },
    });
    await h.startReplica();
    try {
      h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'Restarted per the runbook.' }, { text: 'Asked again.' });
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
      await control.stalled.promise;
      // The replica takes the thread over once the lock lapses and finishes the turn.
      await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted per the runbook.'), { timeoutMs: 20_000, message: 'the answer' });
      control.released.resolve();
      await h.settled();
      const told = h.openai.requests.slice(1).map((request) => conversationOf(request).find((message) => message.role === 'tool')?.text ?? '');
      expect({ invocations: h.invocations(), toldModel: told }).toEqual({
        invocations: [['rollout', 'restart', 'deployment/worker', '-n', 'staging']],
        toldModel: expect.not.arrayContaining([expect.stringContaining('Not run')]),
      });
    } finally {
      control.released.resolve();
    }
  }, 60_000);
});

describe('a resumed turn whose next step the approval hook approved, its process stalling right after that inline claim', () => {
  it('the hook-approved call still runs once and the thread gets its answer', async () => {
    const control = { stalling: false, stalled: deferred(), released: deferred() };
    let built = 0;
    const wrapStore = (store: StateStore): StateStore => {
      built += 1;
      if (built > 1) return store;
      const stall = async () => {
        if (control.stalling) await control.released.promise;
      };
      return stallable(stall, {
        ...store,
        async commitStepWithThread(options) {
          const result = await store.commitStepWithThread(options);
          // The claim of the step the hook decided (the staging call), inside the first resume's item.
          const staging = options.transition.step.calls.some((call) => (call.input as { namespace?: string }).namespace === 'staging');
          if (result === 'committed' && staging && !process.env.NO_STALL) {
            control.stalling = true;
            control.stalled.resolve();
            await control.released.promise;
          } else if (result === 'committed' && staging) control.stalled.resolve();
          return result;
        },
      });
    };
    const h = await harness({
      environment: { COUNTERSIGN_LOCK_TTL_MS: '1000' },
      sweepIntervalMs: 100,
      wrapStore,
      onApprovalRequest: { name: 'staging-only', decide: ({ input }) => ((input as { namespace: string }).namespace === 'staging' ? { decision: 'approve' } : undefined) },
    });
    const replica = await h.startReplica();
    try {
      h.openai.enqueue(
        { toolCalls: [{ name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } }] },
        { toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] },
        { text: 'Restarted the api in prod and the worker in staging.' },
      );
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'restart the api in prod, then the worker in staging', ts: threadTs });
      const card = await waitFor(() => h.slack.messages(CHANNEL, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the card' });
      await h.settled();
      const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
      await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
      await control.stalled.promise;
      // The replica takes the resume's item over once the lock lapses; once nothing is queued or in flight, it is done.
      await waitFor(async () => (await replica.bot.store.busyThreads({ limit: 10 })).length === 0, { timeoutMs: 20_000, message: 'the replica to finish the item' });
      control.released.resolve();
      await h.settled();
      expect({
        invocations: h.invocations(),
        answered: threadReplies(h, threadTs).some((message) => message.text === 'Restarted the api in prod and the worker in staging.'),
      }).toEqual({
        invocations: [
          ['rollout', 'restart', 'deployment/api', '-n', 'prod'],
          ['rollout', 'restart', 'deployment/worker', '-n', 'staging'],
        ],
        answered: true,
      });
    } finally {
      control.released.resolve();
    }
  }, 60_000);
});

describe('a Try again whose turn the approval hook resumed inline, its process stalling right after that claim', () => {
  it('the hook-approved call still runs once and the thread gets its answer', async () => {
    const control = { stalling: false, stalled: deferred(), released: deferred() };
    let built = 0;
    const wrapStore = (store: StateStore): StateStore => {
      built += 1;
      if (built > 1) return store;
      const stall = async () => {
        if (control.stalling) await control.released.promise;
      };
      return stallable(stall, {
        ...store,
        async commitStepWithThread(options) {
          const result = await store.commitStepWithThread(options);
          // The claim of the step the hook decided, inside the retry's item.
          if (result === 'committed' && !control.stalling) {
            control.stalling = true;
            control.stalled.resolve();
            await control.released.promise;
          }
          return result;
        },
      });
    };
    const h = await harness({
      environment: { COUNTERSIGN_LOCK_TTL_MS: '1000' },
      sweepIntervalMs: 100,
      wrapStore,
      onApprovalRequest: { name: 'runbook', decide: () => ({ decision: 'approve' }) },
    });
    const replica = await h.startReplica();
    try {
      h.openai.enqueue(
        { error: { status: 400, message: 'model said no' } },
        { toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] },
        { text: 'Restarted the worker in staging.' },
      );
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'restart the worker in staging', ts: threadTs });
      const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).some((button) => button.actionId === 'countersign_retry')), { message: 'the failure notice' });
      await h.settled();
      const retry = cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry')!;
      await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...retry });
      await control.stalled.promise;
      // The replica takes the retry's item over once the lock lapses; once nothing is queued or in flight, it is done.
      await waitFor(async () => (await replica.bot.store.busyThreads({ limit: 10 })).length === 0, { timeoutMs: 20_000, message: 'the replica to finish the item' });
      control.released.resolve();
      await h.settled();
      const told = h.openai.requests.slice(2).map((request) => conversationOf(request).find((message) => message.role === 'tool')?.text ?? '');
      expect({
        invocations: h.invocations(),
        answered: threadReplies(h, threadTs).some((message) => message.text === 'Restarted the worker in staging.'),
        toldModel: told,
      }).toEqual({
        invocations: [['rollout', 'restart', 'deployment/worker', '-n', 'staging']],
        answered: true,
        toldModel: expect.not.arrayContaining([expect.stringContaining('Not run')]),
      });
    } finally {
      control.released.resolve();
    }
  }, 60_000);
});
