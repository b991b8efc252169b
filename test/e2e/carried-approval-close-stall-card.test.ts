import { describe, expect, it } from 'vitest';
import { SWEEP_SHOWS_AFTER_MS } from '../../src/conversation/card-after-write.js';
import type { StateStore } from '../../src/store/state-store.js';
import { deferred } from '../helpers/deferred.js';
import { markerWriteFailsOnce } from '../helpers/marker-write-fails-once.js';
import { stallable } from '../helpers/stalling-store.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * 7f0449e: a new message after a failed turn closes the approvals that turn kept for Try again
 * (`createCarriedApprovalsClosing`): one write (`commitStepWithThread`) closes the approval on its
 * step and drops `failedTurn` from the thread, and only AFTER it is the card refreshed. A process
 * that stops between the two (a crash, a GC pause or frozen VM past its lock) leaves the message
 * item to a replica, which finds no `failedTurn` any more and so nothing to close or show: the card
 * keeps saying "Approved by <@UBOB>" for ever, of a call that was closed and will never run (the
 * model and the audit trail say it was closed). The resume claim has a recovery for exactly this
 * window (`showClosedCalls`); this write had none. A card refresh is now kept for the sweep before
 * the write (`writeThenShowCard`), due a few seconds after it.
 *
 * Those seconds (`SWEEP_SHOWS_AFTER_MS`) are not waited out: once both processes are idle, the
 * clock the bots and Redis judge deadlines by moves on by them.
 */
const harness = useHarnesses();

describe('a message closing a failed turn\'s carried approval, its process stalling right after that write', () => {
  it('the card still ends up saying the call was not run (not "Approved by")', async () => {
    const control = { stalling: false, stalled: deferred(), released: deferred() };
    let built = 0;
    const wrapStore = (store: StateStore): StateStore => {
      built += 1;
      if (built > 1) return store;
      const stall = async () => {
        if (control.stalling) await control.released.promise;
      };
      return stallable(stall, {
        ...markerWriteFailsOnce(store),
        async commitStepWithThread(options) {
          const result = await store.commitStepWithThread(options);
          const closesCarried = Object.values(options.transition.step.decisions).some((decision) => decision.reason?.includes('newer message came instead of Try again'));
          if (result === 'committed' && closesCarried && !control.stalling) {
            // The carried approval is closed on its step and the thread saved: the process stalls before the card update.
            control.stalling = true;
            control.stalled.resolve();
            await control.released.promise;
          }
          return result;
        },
      });
    };
    const clock = { skewMs: 0 };
    const h = await harness({ environment: { COUNTERSIGN_LOCK_TTL_MS: '1000' }, sweepIntervalMs: 100, wrapStore, now: () => Date.now() + clock.skewMs });
    try {
      h.openai.enqueue(
        { toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] },
        { error: { status: 400, message: 'model exploded' } },
        { text: 'The restart did not run; ask me again if you still want it.' },
      );
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
      const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the card' });
      await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')! });
      await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('could not finish')), { timeoutMs: 10_000, message: 'the failure notice' });
      await h.settled();
      const currentCard = () => h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
      expect(JSON.stringify(currentCard().blocks)).toContain('Approved by');

      // A replica on the same Redis, to take the message over once the first process stalls.
      await h.startReplica();
      await h.threadMessage({ user: 'UALICE', text: 'did the worker restart?', threadTs, ts: nextTs() });
      await control.stalled.promise;
      await waitFor(() => threadReplies(h, threadTs).some((message) => message.text.startsWith('The restart did not run')), { timeoutMs: 20_000, message: 'the replica to answer the message' });
      control.released.resolve();
      await h.settled();
      // The stalled process, fenced, can no longer update the card: the sweep draws it from the step, a few seconds after the write.
      clock.skewMs = SWEEP_SHOWS_AFTER_MS;
      await waitFor(() => !JSON.stringify(currentCard().blocks).includes('Approved by'), { timeoutMs: 30_000, message: 'the sweep to draw the card again' });

      // What the record says: closed by countersign, not run.
      const closed = (await h.auditEvents()).filter((event) => event.type === 'decision' && event.userId === 'countersign');
      expect(closed).toEqual([expect.objectContaining({ outcome: 'denied', toolName: 'restart_service' })]);
      expect(h.invocations()).toEqual([]);
      // What the card says.
      const shown = JSON.stringify(currentCard().blocks);
      expect(shown, 'the card still says the closed call was approved').not.toContain('Approved by');
      expect(shown).toContain('Not run');
    } finally {
      control.released.resolve();
    }
  }, 90_000);
});
