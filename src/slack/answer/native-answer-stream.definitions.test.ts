import { describe, expect, it } from 'vitest';
import { codeOffsets, expectShownRight, MENTIONABLE_USER_IDS as MENTIONABLE, streamAnswer } from '../../../test/helpers/streamed-answer-messages.js';
import { safeMarkdown } from '../format/safe-markdown.js';
import { renderAnswer } from './render-answer.js';

const paragraphs = Array.from({ length: 30 }, (_, index) => `Paragraph ${index}: the deploy went fine on every host, see the dashboard for the numbers.`).join('\n\n');

describe('native streaming of an answer with a definition, which changes how text before it reads', () => {
  // `[docs][x`]` is a link once `[x`]: …` is defined, and the backticks after it enclose `<@U0IN> **x**`;
  // without the definition, `` `]` `` is the code span and the mention after it is text: it pings, and bold renders.
  // A footnote's label does the same. The definition comes in a later message than the reference.
  it.each([
    ['a link reference definition', `See [docs][x\`]\` <@U0IN> **x** \`\n\n${paragraphs}\n\n[x\`]: https://example.com/docs\n`],
    ['a footnote definition', `See [^x\`]\` <@U0IN> **x** \`\n\n${paragraphs}\n\n[^x\`]: The docs.\n`],
  ])('%s in a later message: the answer is shown as edits, the messages already streamed rewritten', async (_name, answer) => {
    const rendered = safeMarkdown(answer, { mentionableUserIds: MENTIONABLE });
    expect(codeOffsets(rendered)(rendered.indexOf('<@U0IN>'))).toBe(true);
    const shown = await streamAnswer(answer, { maxMessageLength: 1000 });
    // Streamed first (no definition yet), then degraded when the definition arrived.
    expect(shown.shown.length).toBeGreaterThan(1);
    expect(shown.degraded).toBe(true);
    expect(shown.messages).toEqual(renderAnswer(answer, { mentionableUserIds: MENTIONABLE }));
    // The mention is in code there, as in the whole answer: it notifies no one.
    expect(shown.messages.join('\n')).not.toContain('<@U0IN>');
  });

  it('a definition written before the reference that uses it: shown as edits too', async () => {
    const answer = `[x]: https://example.com/docs\n\n${paragraphs}\n\nSee [the docs][x].\n`;
    const shown = await streamAnswer(answer, { maxMessageLength: 1000 });
    expect(shown.degraded).toBe(true);
    expect(shown.messages).toEqual(renderAnswer(answer, { mentionableUserIds: MENTIONABLE }));
  });
});

describe('a link reference definition later in the answer changes what is code in an earlier message', () => {
  it('a reference whose label holds a backtick: with its definition (in a later message) the span after it is code, in the first message alone it is live text', async () => {
    // `[docs][x`]` is a link once `[x`]: …` is defined, and the backticks after it enclose `<@U0IN> **x**`;
    // without the definition, `` `]` `` is the code span and the mention after it is text: it pings, and bold renders.
    const paragraphs = Array.from({ length: 30 }, (_, index) => `Paragraph ${index}: the deploy went fine on every host, see the dashboard for the numbers.`).join('\n\n');
    const answer = `See [docs][x\`]\` <@U0IN> **x** \`\n\n${paragraphs}\n\n[x\`]: https://example.com/docs\n`;
    const rendered = safeMarkdown(answer, { mentionableUserIds: MENTIONABLE });
    expect(codeOffsets(rendered)(rendered.indexOf('<@U0IN>'))).toBe(true);
    const shown = await streamAnswer(answer, { maxMessageLength: 1000 });
    if (!shown.degraded) {
      const [first = ''] = shown.messages;
      expect(first).not.toContain('[x`]:');
      // The first message, read on its own as Slack reads it: is the mention still code there?
      expect({ mentionInCode: codeOffsets(first)(first.indexOf('<@U0IN>')) }).toEqual({ mentionInCode: true });
    }
    expectShownRight(answer, shown, 1000);
  });
});
