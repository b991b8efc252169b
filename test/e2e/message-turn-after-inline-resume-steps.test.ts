import { describe, expect, it } from 'vitest';
import type { StateStore } from '../../src/store/state-store.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';
import { deferred } from '../helpers/deferred.js';

/**
 * 92ab384 counts model steps per work item (`stepsTaken`, keyed by the item's TurnScope) so that the
 * rounds resumed at once share `agent.maxSteps`. But a message item that finds the thread's card
 * decided and not yet resumed first resumes that step (`settlePendingStep` → `claimAndResume` →
 * runAndPublish: the PREVIOUS turn, finished) and then runs the message's own, new turn with the
 * same scope. The new turn inherits the steps the previous turn took: here none are left, so the
 * bot answers the new message with "I stopped after 2 steps without finishing" without ever asking
 * the model about it.
 */
const harness = useHarnesses();

describe('a message that first resumes a decided step, then runs its own turn', () => {
  it('gets its own agent.maxSteps: the resumed turn\'s steps are not charged to it', async () => {
    const control = { holdRead: false, readHeld: deferred(), mayRead: deferred() };
    let built = 0;
    const wrapStore = (store: StateStore): StateStore => {
      built += 1;
      if (built > 1) return store;
      return {
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
      };
    };
    const h = await harness({ extraYaml: 'agent:\n  maxSteps: 2\n', wrapStore });
    try {
      h.openai.enqueue(
        // Turn 1, step 1: the restart (a card).
        { toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] },
        // Turn 1 resumed: a read, then its answer (2 steps in all for the resumed round).
        { toolCalls: [{ name: 'get_pods', arguments: { namespace: 'prod' } }] },
        { text: 'Restarted the worker; pods are fine.' },
        // Turn 2 (the new message): a plain answer, one step.
        { text: 'It is done.' },
      );
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
      await h.settled();

      const texts = threadReplies(h, threadTs).map((message) => message.text);
      expect(h.invocations()).toEqual([
        ['rollout', 'restart', 'deployment/worker', '-n', 'prod'],
        ['get', 'pods', '-n', 'prod'],
      ]);
      expect(texts).toContain('Restarted the worker; pods are fine.');
      // The new message's turn asks the model (4 requests in all) and answers it.
      expect({ modelRequests: h.openai.requests.length, stepLimitNotice: texts.filter((text) => text.includes('I stopped after')) }).toEqual({ modelRequests: 4, stepLimitNotice: [] });
      expect(texts).toContain('It is done.');
    } finally {
      control.mayRead.resolve();
    }
  }, 60_000);
});
