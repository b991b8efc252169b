import { describe, expect, it } from 'vitest';
import { answerShowsNothing, renderAnswer, withOpenCodeClosed } from './render-answer.js';

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

describe('an answer that stops inside a code block (the content filter ended it there)', () => {
  it.each([
    ['a backtick fence', 'Run this:\n```sh\nkubectl get pods', 'Run this:\n```sh\nkubectl get pods\n```'],
    ['ending with a newline', 'Run this:\n```\nls\n', 'Run this:\n```\nls\n```'],
    ['a longer fence, with a shorter one inside', '````md\n```\nnested', '````md\n```\nnested\n````'],
    ['a tilde fence', '~~~\nls', '~~~\nls\n~~~'],
    ['only the opening line', 'Here:\n```', 'Here:\n```\n```'],
    ['CRLF line endings', 'Run:\r\n```\r\nls', 'Run:\r\n```\r\nls\n```'],
  ])('%s is closed', (_name, markdown, closed) => {
    expect(withOpenCodeClosed(markdown)).toBe(closed);
    // After it, text is text again.
    expect(renderAnswer(`${withOpenCodeClosed(markdown)}\n\n_note_`).join('\n')).toMatch(/_note_$/);
  });

  it.each([
    ['closed', '```\nls\n```'],
    ['closed, then text', '```\nls\n```\nDone.'],
    ['closed by a longer fence', '```\nls\n`````'],
    ['indented code, which has no fence to close', 'Text\n\n    ls -l'],
    ['a fence in a quote, which ends with the quote', '> ```\n> ls'],
    ['a fence in a list item', '- step:\n  ```\n  ls'],
    ['no code at all', 'Just text.'],
  ])('%s is left as it is', (_name, markdown) => {
    expect(withOpenCodeClosed(markdown)).toBe(markdown);
  });
});
