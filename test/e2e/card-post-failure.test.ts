import { describe, expect, it } from 'vitest';
import type { StateStore } from '../../src/store/state-store.js';
import { BOT_USER_ID, CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();

describe('a card that cannot be posted', () => {
  it('is told as an error nobody decided: in the thread, to the model and in the audit trail', async () => {
    const h = await harness();
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } }] });
    h.slack.failNext('chat.postMessage', { error: 'invalid_blocks' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart api', ts: threadTs });
    const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('could not post the approval card')), { message: 'notice' });
    expect(notice.text).toContain('invalid_blocks');
    expect(notice.text).toContain('nobody could decide');
    expect(notice.text).toContain('not a denial');
    await h.settled();
    expect(h.invocations()).toEqual([]);

    const decisions = (await h.auditEvents()).filter((event) => event.type === 'decision');
    expect(decisions).toHaveLength(1);
    const [decision] = decisions;
    // Closed by countersign itself: no Slack user, neither a person nor the bot's own user id.
    expect(decision).toMatchObject({ outcome: 'denied', userId: 'countersign' });
    expect(decision?.type === 'decision' && decision.reason).toContain('the approval card could not be posted');
    expect(JSON.stringify(decision)).not.toContain(BOT_USER_ID);

    // The next turn's model reads why the call did not run.
    h.openai.enqueue({ text: 'The card could not be posted; shall I ask again?' });
    await h.threadMessage({ user: 'UALICE', text: 'what happened?', threadTs, ts: nextTs() });
    await waitFor(() => h.openai.requests.length === 2, { message: 'the next model request' });
    const prompt = JSON.stringify(h.openai.requests[1]!.body);
    expect(prompt).toContain('the approval card could not be posted');
    expect(prompt).toContain('This was an error, not a decision');
    expect(prompt).not.toContain('human decision');
  });
});

describe('a card that was posted but whose ts could not be recorded', () => {
  /** A store whose `setStepCard` fails `times` times as a Redis outage would (and then works); `recorded` settles on the first that works. */
  function failingCardRecord(times: number) {
    let left = times;
    let markRecorded: () => void = () => {};
    const recorded = new Promise<void>((resolve) => (markRecorded = resolve));
    const wrapStore = (store: StateStore): StateStore => ({
      ...store,
      setStepCard: async (...args) => {
        if (left > 0) {
          left -= 1;
          throw new Error('Connection is closed.');
        }
        const recorded = await store.setStepCard(...args);
        markRecorded();
        return recorded;
      },
    });
    return { wrapStore, recorded };
  }

  async function cardAfterMention(h: Harness) {
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'api', namespace: 'staging' } }] });
    h.openai.enqueue({ text: 'Restarted api.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart api in staging', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the approval card' });
    return { threadTs, card, approve: cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')! };
  }

  it('stays open when Redis is back within seconds: the ts is recorded, the approval runs the call and the card shows it', async () => {
    const { wrapStore, recorded } = failingCardRecord(2);
    const h = await harness({ wrapStore });
    const { threadTs, card, approve } = await cardAfterMention(h);
    await recorded;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted api.'), { message: 'the answer' });
    expect(h.invocations()).toHaveLength(1);
    expect(threadReplies(h, threadTs).some((message) => message.text.includes('could not post the approval card'))).toBe(false);
    expect(JSON.stringify(h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)?.blocks)).toContain('Approved by <@UBOB>');
  });

  it('stays decidable when the ts can never be recorded: no "could not post" notice, and the approval runs the call', async () => {
    // The ts is given up on after a second of tries instead of ten: what follows is the same.
    const h = await harness({ wrapStore: failingCardRecord(Number.POSITIVE_INFINITY).wrapStore, cardRecordWaitMs: 1_000 });
    const { threadTs, card, approve } = await cardAfterMention(h);
    await waitFor(() => h.warnings().some((line) => line.includes('card-ts-unrecorded')), { timeoutMs: 20_000, message: 'the ts given up on' });
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted api.'), { message: 'the answer' });
    expect(h.invocations()).toHaveLength(1);
    expect(threadReplies(h, threadTs).some((message) => message.text.includes('could not post the approval card'))).toBe(false);
  });
});
