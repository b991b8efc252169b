import { describe, expect, it } from 'vitest';
import { answerShowsNothing, renderAnswer } from './render-answer.js';

/**
 * `x@here` is left alone by the ping defusing (a letter before the `@`: not a word), but when the
 * answer is longer than a message and the splitter has to cut that long word, a cut right before
 * the `@` would start the next message with a bare `@here` / `@channel`, the plain-word form the
 * formatter otherwise always defuses (Slack may turn it into a ping: `link_names`, README "no form
 * of broadcast survives").
 */
describe('a ping word at a message split', () => {
  it.each([
    ['@here', `${'a'.repeat(3900)}@here please look`],
    ['@channel', `${'a'.repeat(3900)}@channel`],
    ['@everyone', `${'b'.repeat(3900)}@everyone`],
  ])('%s does not start the next message undefused', (_word, markdown) => {
    const messages = renderAnswer(markdown);
    expect(messages.length).toBeGreaterThan(1);
    for (const message of messages) expect(message).not.toMatch(/(^|[^\p{L}\p{N}])@(here|channel|everyone)(?![\p{L}\p{N}])/iu);
  });
});

describe('an answer that shows nothing', () => {
  it('is text that renders to no message, or to one a reader sees nothing in', () => {
    for (const markdown of ['', ' \n\t', '```\n```', '```', '[runbook]: https://runbooks.example.com/worker', '&nbsp;', '\u200b', '&#8203;']) {
      expect(answerShowsNothing(markdown), JSON.stringify(markdown)).toBe(true);
    }
  });

  it('is not any text a reader sees, however short', () => {
    for (const markdown of ['.', '```\npod-a\n```', '[runbook](https://runbooks.example.com/worker)', '---', '`x`', '@here']) {
      expect(renderAnswer(markdown).length).toBeGreaterThan(0);
      expect(answerShowsNothing(markdown), JSON.stringify(markdown)).toBe(false);
    }
  });
});
