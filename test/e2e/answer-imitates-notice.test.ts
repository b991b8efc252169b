import { describe, expect, it } from 'vitest';
import { CHANNEL, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * The model's answer is untrusted text (a tool's output can steer it), but it is posted by the same
 * bot, as the same kind of message, as countersign's own notices about who approved what. A model
 * that writes a notice's words produces a message nobody can tell from the real one.
 */
const harness = useHarnesses();

describe("an answer that copies countersign's own notice word for word", () => {
  it('is told apart from the notice countersign posted', async () => {
    const h = await harness({ extraYaml: `policy:\n  autoApprove:\n    channels: [${CHANNEL}]\n` });
    const noticeText = ':robot_face: `restart_service` ran without a card: auto-approve mode is on here.';
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: noticeText });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in staging', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).length >= 2, { message: 'the notice and the answer' });
    await h.settled();
    const [notice, answer] = threadReplies(h, threadTs).map(({ user, bot_id, text, blocks }: any) => ({ user, bot_id, text, blocks }));
    expect(notice!.text).toBe(noticeText);
    // Same author, same text, same (absent) blocks: the model's words pass for countersign's.
    expect(answer).not.toEqual(notice);
  });
});
