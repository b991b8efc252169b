import { describe, expect, it } from 'vitest';
import { BOT_USER_ID, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

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
