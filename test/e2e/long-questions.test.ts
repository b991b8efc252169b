import { describe, expect, it } from 'vitest';
import { findBlockKitViolations } from '../../src/slack/blocks/limits.js';
import { VIEW_BYTE_LIMIT } from '../../src/slack/modals/modal-view.js';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();

describe('ask_user: many long questions in one step', () => {
  it('posts a card Slack accepts, and View full input shows a cut question whole', async () => {
    const h = await harness();
    // Ten questions at the 2,000 characters the ask_user schema allows: 20,000 characters, where a
    // message's blocks hold about 12,000.
    const questions = Array.from({ length: 10 }, (_, index) => `Question ${index}: ${'q'.repeat(1975)} end of ${index}?`);
    h.openai.enqueue({ toolCalls: questions.map((question) => ({ name: 'ask_user', arguments: { question, options: ['yes', 'no'] } })) }, { text: 'Thanks.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'ask me everything', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'question card' });
    expect(findBlockKitViolations(card.blocks ?? [], { surface: 'message' })).toEqual([]);
    expect(JSON.stringify(card.blocks)).toContain('truncated');

    const viewButtons = cardButtons(card.blocks).filter((button) => button.actionId === 'countersign_view_input');
    expect(viewButtons).toHaveLength(10);
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...viewButtons[3]! });
    const opened = await waitFor(() => h.slack.callsTo('views.open')[0], { message: 'views.open' });
    const view = opened.args.view as { title: { text: string }; blocks: any[] };
    expect(Buffer.byteLength(JSON.stringify(view))).toBeLessThanOrEqual(VIEW_BYTE_LIMIT);
    expect(view.title.text).toBe('Full question');
    expect(view.blocks.map((block) => block.text?.text ?? '').join('')).toBe(questions[3]);
  });
});
