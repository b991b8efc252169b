import { describe, expect, it } from 'vitest';
import type { StateStore } from '../../src/store/state-store.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';
import { deferred } from '../helpers/deferred.js';

/**
 * 92ab384: a round resumed in the same work item after its turn's last step is not run; it ends
 * with the step-limit notice and keeps the approved calls not yet run with that failure
 * (`failedTurn.approvedCalls`), for Try again to run once. The step budget is per work item.
 *
 * A message item settles the thread's decided steps first (`settlePendingStep`): S1 (approved
 * before the message could close it) is resumed, its turn spends agent.maxSteps and its last step
 * asks for a second restart (card S2); S2 too is approved before the message can close it, so the
 * same item resumes S2, past the item's budget: step-limit notice, approval carried with the
 * failure. Then the message goes on and `handleMessage` deletes `thread.failedTurn` (and the
 * message's own turn, also past the budget, posts a second step-limit notice without approvals).
 * The approved restart of S2 never runs, by any path: not at once, not after Try again.
 */
const harness = useHarnesses();

describe('a call people approved, resumed by a message item past the item\'s step budget', () => {
  it('still runs, once (at once or after Try again)', async () => {
    const control = { holdRead: false, readHeld: deferred(), mayRead: deferred(), armSupersede: false, supersedeHeld: deferred(), maySupersede: deferred() };
    let built = 0;
    const wrapStore = (store: StateStore): StateStore => {
      built += 1;
      if (built > 1) return store;
      return {
        ...store,
        async getThreadAndDeletion(threadKey, message) {
          if (control.holdRead) {
            control.holdRead = false;
            control.readHeld.resolve();
            await control.mayRead.promise;
          }
          return store.getThreadAndDeletion(threadKey, message);
        },
        async commitStep(transition) {
          // The message closing the second card waits until that card has been approved.
          if (control.armSupersede && transition.step.phase === 'superseded') {
            control.armSupersede = false;
            control.supersedeHeld.resolve();
            await control.maySupersede.promise;
          }
          return store.commitStep(transition);
        },
      };
    };
    const h = await harness({ extraYaml: 'agent:\n  maxSteps: 2\n', wrapStore });
    try {
      const scripted = [
        // Turn 1: the first restart (card S1).
        { toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] },
        // S1 resumed: a read, then a second restart (card S2): two steps, the turn's last.
        { toolCalls: [{ name: 'get_pods', arguments: { namespace: 'prod' } }] },
        { toolCalls: [{ name: 'restart_service', arguments: { service: 'api', namespace: 'staging' } }] },
      ];
      // Then plain answers, whatever is asked.
      h.openai.setResponder(() => scripted.shift() ?? { text: 'Done.' });
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'restart the worker, then the api', ts: threadTs });
      const card1 = await waitFor(() => h.slack.messages(CHANNEL, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the first card' });
      await h.settled();

      // A follow-up message takes the thread; before it reads it, the first card is approved.
      control.holdRead = true;
      await h.threadMessage({ user: 'UALICE', text: 'and tell me when it is done', threadTs, ts: nextTs() });
      await control.readHeld.promise;
      await h.click({ user: 'UBOB', cardTs: card1.ts, threadTs, ...cardButtons(card1.blocks).find((button) => button.actionId === 'countersign_approve')! });
      await waitFor(async () => (await h.auditEvents()).filter((event) => event.type === 'decision').length === 1, { message: 'the first approval' });
      control.armSupersede = true;
      control.mayRead.resolve();

      // The resumed turn posted the second card; the message is about to close it, and it is approved first.
      await control.supersedeHeld.promise;
      const card2 = threadReplies(h, threadTs).filter((message) => cardButtons(message.blocks).some((button) => button.actionId === 'countersign_approve')).find((message) => message.ts !== card1.ts)!;
      expect(JSON.stringify(card2.blocks)).toContain('api');
      await h.click({ user: 'UBOB', cardTs: card2.ts, threadTs, ...cardButtons(card2.blocks).find((button) => button.actionId === 'countersign_approve')! });
      await waitFor(async () => (await h.auditEvents()).filter((event) => event.type === 'decision').length === 2, { message: 'the second approval' });
      control.maySupersede.resolve();
      await h.settled();

      const restartApi = ['rollout', 'restart', 'deployment/api', '-n', 'staging'];
      const ranAtOnce = h.invocations().filter((argv) => JSON.stringify(argv) === JSON.stringify(restartApi)).length;
      if (ranAtOnce === 0) {
        // Not run yet: the thread must offer Try again that runs it.
        const notices = threadReplies(h, threadTs).filter((message) => cardButtons(message.blocks).some((button) => button.actionId === 'countersign_retry'));
        for (const notice of notices.reverse()) {
          await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry')! });
          await h.settled();
        }
      }
      expect({
        restartApiRuns: h.invocations().filter((argv) => JSON.stringify(argv) === JSON.stringify(restartApi)).length,
        stepLimitNotices: threadReplies(h, threadTs).filter((message) => message.text.includes('I stopped after')).map((message) => message.text),
      }).toMatchObject({ restartApiRuns: 1 });
    } finally {
      control.mayRead.resolve();
      control.maySupersede.resolve();
    }
  }, 60_000);
});
