import { describe, expect, it } from 'vitest';
import type { StateStore } from '../../src/store/state-store.js';
import { CHANNEL, cardButtons, nextTs, startHarness, threadReplies, waitFor } from './harness.js';
import { deferred } from '../helpers/deferred.js';

/**
 * A decided step whose resume is queued but not claimed for longer than the lock TTL (a worker
 * pool with a backlog, a process whose gate is full). The bot's clock runs two minutes ahead of the
 * store's, so the step's decision looks "longer ago than the TTL" to the recovery sweep at once:
 * its view is what it would be after a 30 s wait.
 */
describe('a resume still waiting its turn when the recovery sweep looks for decided steps nobody resumed', () => {
  it('is resumed once: the approved call runs once, and a failed resumed turn is not run again without Try again', async () => {
    const claimHeld = deferred();
    const claimMayProceed = deferred();
    let heldClaim = false;
    let sweepsBegun = 0;
    const sweepWaiters: Array<{ at: number; resolve: () => void }> = [];
    let extraResumesQueued = 0;
    const h = await startHarness({
      now: () => Date.now() + 120_000,
      sweepIntervalMs: 100,
      wrapStore: (store: StateStore): StateStore => ({
        ...store,
        async dueSteps(options) {
          // Each sweep starts with the due reminders, and a process runs one sweep at a time.
          if (options.kind === 'reminder') {
            sweepsBegun += 1;
            for (const waiter of sweepWaiters.filter((candidate) => sweepsBegun >= candidate.at)) waiter.resolve();
          }
          return store.dueSteps(options);
        },
        async commitStepWithThread(options) {
          // The resume's claim: held as if the item still waited its turn.
          if (!heldClaim) {
            heldClaim = true;
            claimHeld.resolve();
            await claimMayProceed.promise;
          }
          return store.commitStepWithThread(options);
        },
        async enqueueWork(threadKey, item, lockTtlMs) {
          // The click queued the resume with its decision (commitStepAndQueue); any other is extra.
          if (item.includes('"kind":"resume"')) extraResumesQueued += 1;
          return store.enqueueWork(threadKey, item, lockTtlMs);
        },
      }),
    });
    try {
      h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { error: { status: 400, message: 'context too long' } }, { text: 'should not be asked' });
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
      const card = await waitFor(() => h.slack.messages(CHANNEL, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the card' });
      const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
      await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
      await claimHeld.promise;
      // A whole sweep runs while the resume waits: the one begun after this point ends before the next begins.
      await new Promise<void>((resolve) => sweepWaiters.push({ at: sweepsBegun + 2, resolve }));
      claimMayProceed.resolve();
      await waitFor(() => threadReplies(h, threadTs).some((message) => /Try again/i.test(message.text)), { message: 'the failure notice' });
      await h.settled();
      const replies = threadReplies(h, threadTs);
      expect({
        invocations: h.invocations().length,
        modelRequests: h.openai.requests.length,
        failureNotices: replies.filter((message) => /Try again/i.test(message.text)).length,
        unrequestedAnswers: replies.filter((message) => message.text === 'should not be asked').length,
        extraResumesQueued,
      }).toEqual({ invocations: 1, modelRequests: 2, failureNotices: 1, unrequestedAnswers: 0, extraResumesQueued: 0 });
    } finally {
      claimMayProceed.resolve();
      await h.stop();
    }
  });
});
