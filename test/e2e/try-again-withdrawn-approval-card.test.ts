import { describe, expect, it } from 'vitest';
import type { StateStore } from '../../src/store/state-store.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * The same class as 7f0449e ("the card kept saying 'Approved by @bob' of a call that would never
 * run"), by the other way out of a failed turn: Try again. A carried approval that no longer holds
 * when Try again judges it again (its approver left the approving group since) is withdrawn in the
 * history and audited (`approval-revoked`), but nothing writes it to its step or updates the card:
 * the card keeps saying "Approved by <@UBOB>" of a call that was refused and never runs. A resume
 * claim that finds an approval revoked writes it on the step and refreshes the card; a newer message
 * (7f0449e) now does too. Try again now does the same (`createWithdrawalsOnSteps`).
 */
const harness = useHarnesses();

const SRE_ONLY = `
policy:
  rules:
    - name: sre
      tools: [restart_service]
      approvers: [group:S0SRE]
`;

function markerWriteFailsOnce(store: StateStore): StateStore {
  let failed = false;
  return {
    ...store,
    markExecuting: async (options) => {
      if (!failed) {
        failed = true;
        throw new Error('Connection is closed.');
      }
      return store.markExecuting(options);
    },
  };
}

describe('Try again finding a carried approval no longer holds', () => {
  it('the card no longer says "Approved by" of the call it refused to run', async () => {
    const h = await harness({ wrapStore: markerWriteFailsOnce, extraYaml: SRE_ONLY });
    h.slack.setUsergroupUsers('S0SRE', ['UBOB']);
    h.openai.enqueue(
      { toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] },
      { error: { status: 400, message: 'model exploded' } },
      { text: 'Bob can no longer approve that.' },
    );
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')! });
    const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('could not finish')), { timeoutMs: 10_000, message: 'failure notice' });
    await h.settled();
    h.slack.setUsergroupUsers('S0SRE', []);

    await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry')! });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Bob can no longer approve that.'), { timeoutMs: 10_000, message: 'answer after retry' });
    await h.settled();

    expect(h.invocations()).toEqual([]);
    const refusals = (await h.auditEvents()).filter((event) => event.type === 'action-refused');
    expect(refusals).toEqual([expect.objectContaining({ userId: 'UBOB', code: 'approval-revoked' })]);
    const shown = JSON.stringify(h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!.blocks);
    expect(shown, 'the card still says the refused call was approved').not.toContain('Approved by');
    expect(shown).toContain('Not run');
  }, 30_000);
});
