import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { codeNodes, endOf, parseMarkdown, startOf } from './parse-markdown.js';
import { safeMarkdown } from './safe-markdown.js';

const ZWSP = '\u200B';

describe('safeMarkdown (for markdown_text, which Slack renders itself)', () => {
  it.each([
    ['formatting is left to Slack', '**bold**, _italic_, ~~gone~~\n- item\n1. first', '**bold**, _italic_, ~~gone~~\n- item\n1. first'],
    ['an honest link stays a link', 'see [the runbook](https://wiki.example.com/runbook)', 'see [the runbook](https://wiki.example.com/runbook)'],
    ['a label naming another address shows the target', '[bank.example/login](https://evil.example/steal)', 'bank.example/login (https://evil.example/steal)'],
    ['a javascript: link becomes text', '[click](javascript:alert(1))', 'click (javascript:alert(1))'],
    ['a URL with parentheses stays a link', '[Foo](https://en.wikipedia.org/wiki/Foo_(bar))', '[Foo](https://en.wikipedia.org/wiki/Foo_(bar))'],
    // To CommonMark a label may go over two lines: this is one link, whose label names another address.
    ['a label over two lines is checked like any other', 'see [bank.example\n/login](https://evil.example)', 'see bank.example\n/login (https://evil.example)'],
    ['broadcast mentions', 'hey <!channel> <!here|@here> <!everyone>', `hey @${ZWSP}channel @${ZWSP}here @${ZWSP}everyone`],
    ['group mention', 'ping <!subteam^S123|@oncall>', `ping @${ZWSP}oncall`],
    ['plain broadcast words', '@here and @channel', `@${ZWSP}here and @${ZWSP}channel`],
    ['Slack link markup cannot hide a target', '<https://evil.example|bank.example>', '\\<https://evil.example|bank.example>'],
    ['entities cannot spell markup', '&lt;!channel&gt;', '\\&lt;!channel\\&gt;'],
    ['HTML is shown, not rendered', '<img src=x onerror=alert(1)>', '\\<img src=x onerror=alert(1)>'],
    ['inline code verbatim', 'run `a <b> & <!here>`', 'run `a <b> & <!here>`'],
    ['fenced code verbatim', '```\n<!channel> & <x>\n```\nafter <!here>', `\`\`\`\n<!channel> & <x>\n\`\`\`\nafter @${ZWSP}here`],
  ])('%s', (_name, markdown, expected) => {
    expect(safeMarkdown(markdown)).toBe(expected);
  });

  it('keeps mentions only of people who may be notified, and channel links', () => {
    const markdown = 'ask <@U123ABC>, <@W0ALICE|alice>, <@U0MALLORY|mallory> and <@W0EVE> in <#C123ABC>';
    expect(safeMarkdown(markdown, { mentionableUserIds: new Set(['U123ABC', 'W0ALICE']) })).toBe(`ask <@U123ABC>, <@W0ALICE>, @${ZWSP}mallory and @${ZWSP}W0EVE in <#C123ABC>`);
    expect(safeMarkdown(markdown)).toBe(`ask @${ZWSP}U123ABC, @${ZWSP}alice, @${ZWSP}mallory and @${ZWSP}W0EVE in <#C123ABC>`);
  });

  it('never lets a broadcast ping or raw markup through outside code, whatever the model writes', () => {
    const pieces = fc.constantFrom('<!channel>', '<!here>', '<!subteam^S1>', '@everyone', '<', '&', '`', '```', '[x](https://a.example)', 'text', ' ', '\n', '!', 'here', 'channel', '>');
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 30 }), (parts) => {
        const safe = safeMarkdown(parts.join(''));
        // What is code is the parser's call, as it is Slack's: outside it, no `<!` that is not escaped, no ping word.
        const code = codeNodes(parseMarkdown(safe));
        const inCode = (offset: number) => code.some((node) => startOf(node) <= offset && offset < endOf(node));
        for (const match of safe.matchAll(/(?<!\\)<!|(?<![\p{L}\p{N}\u200B])@(?:channel|here|everyone)(?![\p{L}\p{N}])/gu)) expect(inCode(match.index)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});
