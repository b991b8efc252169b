import { describe, expect, it } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import { markerWriteFailsOnce } from '../helpers/marker-write-fails-once.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * A turn failed after Bob approved a call and before it started: the failure keeps the approval for
 * Try again (`FailedTurn.approvedCalls`). Alice sends a new message instead, as the notice offers.
 * The message ends the failed turn, and its take-in used to drop the failure silently: the card kept
 * saying "Approved by Bob" of a call that would never run, the model was told it was interrupted,
 * and the Try again that would have run it found nothing to retry. Now the approval lapses visibly:
 * the card says "Not run" and why, the model and the audit trail are told the same.
 */
const harness = useHarnesses();

describe('a new message after a turn that failed before an approved call started', () => {
  it('closes that approval on its card, tells the model why, and runs nothing', async () => {
    const h = await harness({ wrapStore: markerWriteFailsOnce });
    h.openai.enqueue(
      { toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] },
      { error: { status: 400, message: 'model exploded' } },
      { text: 'The restart did not run; ask me again if you still want it.' },
    );
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the card' });
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')! });
    const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('could not finish')), { timeoutMs: 10_000, message: 'the failure notice' });
    await h.settled();
    const currentCard = () => h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
    expect(JSON.stringify(currentCard().blocks)).toContain('Approved by');

    await h.threadMessage({ user: 'UALICE', text: 'did the worker restart?', threadTs, ts: nextTs() });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text.startsWith('The restart did not run')), { timeoutMs: 10_000, message: 'the answer to the new message' });
    await h.settled();

    const shown = JSON.stringify(currentCard().blocks);
    expect(shown).toContain('Not run: its turn stopped before it ran, and a newer message came instead of Try again');
    expect(shown).not.toContain('Approved by');
    const told = conversationOf(h.openai.requests.at(-1)!)
      .filter((message) => message.role === 'tool')
      .map((message) => message.text ?? '')
      .join('\n');
    expect(told).toContain('a newer message came instead of Try again; it had been approved by <@UBOB>, but was closed before it ran');
    expect(told).not.toContain('interrupted');
    const closed = (await h.auditEvents()).filter((event) => event.type === 'decision' && event.userId === 'countersign');
    expect(closed).toEqual([expect.objectContaining({ outcome: 'denied', toolName: 'restart_service', reason: expect.stringContaining('newer message came instead of Try again') })]);

    // The failure's Try again has nothing left to run.
    await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry')! });
    await waitFor(() => h.slack.callsTo('chat.postEphemeral').some((call) => String(call.args.text).includes('nothing to retry')), { message: 'the answer to Try again' });
    await h.settled();
    expect(h.invocations()).toEqual([]);
  }, 30_000);
});
