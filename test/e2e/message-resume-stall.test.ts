import { describe, expect, it } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import type { StateStore } from '../../src/store/state-store.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';
import { deferred } from '../helpers/deferred.js';
import { stallable } from '../helpers/stalling-store.js';

/**
 * A message arrives in a thread whose card was decided but not yet resumed: the message's item
 * resumes the step first (`settlePendingStep` → `claimAndResume`). Its process stalls right after
 * the claim (a GC pause, a frozen VM) past its lock; a replica takes the message item over.
 *
 * README ("Failures, restarts and several replicas"): "Calls that never started still run after
 * recovery, once their approvals are checked again". The approved call here never started, so the
 * replica must run it (once), as it does when the stall is in the step's own resume item.
 *
 * The stall is modelled with the doomed bot's store: after the claim's write, its next calls (and
 * every lock renewal) wait until released; the replica (same Redis) takes over. With NO_STALL=1
 * the same scenario runs without the stall (a control): the call runs once and the test passes.
 */
const harness = useHarnesses();

describe('a message that resumes a decided step, its process stalling right after the claim', () => {
  it('the approved call still runs once, on the process that took the thread over', async () => {
    const control = {
      holdRead: false,
      readHeld: deferred(),
      mayRead: deferred(),
      stalling: false,
      stalled: deferred(),
      released: deferred(),
    };
    let built = 0;
    const wrapStore = (store: StateStore): StateStore => {
      built += 1;
      if (built > 1) return store;
      const stall = async () => {
        if (control.stalling) await control.released.promise;
      };
      return stallable(stall, {
        ...store,
        async getThreadAndDeletion(threadKey, message) {
          // The message's read of its thread waits until the card has been approved meanwhile.
          if (control.holdRead) {
            control.holdRead = false;
            control.readHeld.resolve();
            await control.mayRead.promise;
          }
          return store.getThreadAndDeletion(threadKey, message);
        },
        async commitStepWithThread(options) {
          await stall();
          const result = await store.commitStepWithThread(options);
          if (result === 'committed' && process.env.NO_STALL) control.stalled.resolve();
          else if (result === 'committed') {
            // The claim is written: the process stalls now.
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
    const h = await harness({ environment: { COUNTERSIGN_LOCK_TTL_MS: '1000' }, sweepIntervalMs: 100, wrapStore });
    await h.startReplica();
    try {
      h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: 'Restarted the worker.' }, { text: 'Here is what happened.' });
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
      const card = await waitFor(() => h.slack.messages(CHANNEL, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the card' });
      await h.settled();

      // A follow-up message takes the thread; before it reads the thread, the card is approved.
      control.holdRead = true;
      await h.threadMessage({ user: 'UALICE', text: 'and tell me when it is done', threadTs, ts: nextTs() });
      await control.readHeld.promise;
      const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
      await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
      await waitFor(async () => (await h.auditEvents()).some((event) => event.type === 'decision'), { message: 'the approval to be recorded' });
      control.mayRead.resolve();

      // The message's item resumes the decided step, claims it, and its process stalls.
      await control.stalled.promise;
      // The replica takes the thread over once the lock lapses and answers.
      await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted the worker.' || message.text === 'Here is what happened.'), {
        timeoutMs: 20_000,
        message: 'the replica to answer',
      });
      control.released.resolve();
      await h.settled();

      const told = h.openai.requests.slice(1).map((request) => conversationOf(request).find((message) => message.role === 'tool')?.text ?? '');
      // The approved call never started anywhere: it must run once, not be dropped as "Not run".
      expect({ invocations: h.invocations(), toldModel: told }).toEqual({
        invocations: [['rollout', 'restart', 'deployment/worker', '-n', 'prod']],
        toldModel: expect.not.arrayContaining([expect.stringContaining('Not run')]),
      });
    } finally {
      control.released.resolve();
      control.mayRead.resolve();
    }
  }, 60_000);
});

describe('a message that resumes a decided step, its process stalling once the resumed turn saved its answer', () => {
  it('the resumed turn\'s answer is still shown (README: "An answer is saved before its final form is shown, so a crash in between still shows it once")', async () => {
    const resumedAnswer = 'Restarted the worker.';
    const control = { holdRead: false, readHeld: deferred(), mayRead: deferred(), stalling: false, stalled: deferred(), released: deferred() };
    let built = 0;
    const wrapStore = (store: StateStore): StateStore => {
      built += 1;
      if (built > 1) return store;
      const stall = async () => {
        if (control.stalling) await control.released.promise;
      };
      return stallable(stall, {
        ...store,
        async getThreadAndDeletion(threadKey, message) {
          if (control.holdRead) {
            control.holdRead = false;
            control.readHeld.resolve();
            await control.mayRead.promise;
          }
          return store.getThreadAndDeletion(threadKey, message);
        },
        async saveThread(thread, ttlMs, fence, options) {
          await stall();
          await store.saveThread(thread, ttlMs, fence, options);
          // The resumed turn's answer is saved (its outbox), not yet posted: the process stalls now.
          if (thread.outbox === resumedAnswer && !control.stalling) {
            control.stalling = true;
            control.stalled.resolve();
            await control.released.promise;
          }
        },
        async extendLock(fence, ttlMs) {
          await stall();
          return store.extendLock(fence, ttlMs);
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
    const h = await harness({ environment: { COUNTERSIGN_LOCK_TTL_MS: '1000' }, sweepIntervalMs: 100, wrapStore });
    await h.startReplica();
    try {
      h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: resumedAnswer }, { text: 'It is done.' });
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
      const card = await waitFor(() => h.slack.messages(CHANNEL, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the card' });
      await h.settled();

      control.holdRead = true;
      await h.threadMessage({ user: 'UALICE', text: 'and tell me when it is done', threadTs, ts: nextTs() });
      await control.readHeld.promise;
      const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
      await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
      await waitFor(async () => (await h.auditEvents()).some((event) => event.type === 'decision'), { message: 'the approval to be recorded' });
      control.mayRead.resolve();

      await control.stalled.promise;
      await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'It is done.'), { timeoutMs: 20_000, message: 'the replica to answer the message' });
      control.released.resolve();
      await h.settled();

      expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'prod']]);
      expect(threadReplies(h, threadTs).filter((message) => message.text === resumedAnswer)).toHaveLength(1);
    } finally {
      control.released.resolve();
      control.mayRead.resolve();
    }
  }, 60_000);
});
