import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { safeMarkdown, safeMarkdownLine, type SafeMarkdownState } from './safe-markdown.js';

const ZWSP = '\u200B';

describe('safeMarkdown (for markdown_text, which Slack renders itself)', () => {
  it.each([
    ['formatting is left to Slack', '**bold**, _italic_, ~~gone~~\n- item\n1. first', '**bold**, _italic_, ~~gone~~\n- item\n1. first'],
    ['an honest link stays a link', 'see [the runbook](https://wiki.example.com/runbook)', 'see [the runbook](https://wiki.example.com/runbook)'],
    ['a label naming another address shows the target', '[bank.example/login](https://evil.example/steal)', 'bank.example/login (https://evil.example/steal)'],
    ['a javascript: link becomes text', '[click](javascript:alert(1))', 'click (javascript:alert(1))'],
    ['a URL with parentheses stays a link', '[Foo](https://en.wikipedia.org/wiki/Foo_(bar))', '[Foo](https://en.wikipedia.org/wiki/Foo_(bar))'],
    ['a label begun on an earlier line cannot become a link', 'see [bank.example\n/login](https://evil.example)', 'see [bank.example\n/login\\](https://evil.example)'],
    ['broadcast mentions', 'hey <!channel> <!here|@here> <!everyone>', `hey @${ZWSP}channel @${ZWSP}here @${ZWSP}everyone`],
    ['group mention', 'ping <!subteam^S123|@oncall>', `ping @${ZWSP}oncall`],
    ['plain broadcast words', '@here and @channel', `@${ZWSP}here and @${ZWSP}channel`],
    ['Slack link markup cannot hide a target', '<https://evil.example|bank.example>', '\\<https://evil.example|bank.example>'],
    ['entities cannot spell markup', '&lt;!channel&gt;', '\\&lt;!channel\\&gt;'],
    ['HTML is shown, not rendered', '<img src=x onerror=alert(1)>', '\\<img src=x onerror=alert(1)>'],
    ['user mention and channel link kept', 'ask <@U123ABC> in <#C123ABC>', 'ask <@U123ABC> in <#C123ABC>'],
    ['inline code verbatim', 'run `a <b> & <!here>`', 'run `a <b> & <!here>`'],
    ['fenced code verbatim', '```\n<!channel> & <x>\n```\nafter <!here>', `\`\`\`\n<!channel> & <x>\n\`\`\`\nafter @${ZWSP}here`],
  ])('%s', (_name, markdown, expected) => {
    expect(safeMarkdown(markdown)).toBe(expected);
  });

  it('never lets a broadcast ping or raw markup through, whatever the model writes', () => {
    const pieces = fc.constantFrom('<!channel>', '<!here>', '<!subteam^S1>', '@everyone', '<', '&', '`', '```', '[x](https://a.example)', 'text', ' ', '\n', '!', 'here', 'channel', '>');
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 30 }), (parts) => {
        const lines = safeMarkdown(parts.join('')).split('\n');
        let insideFence = false;
        for (const line of lines) {
          if (/^ {0,3}```/.test(line)) insideFence = !insideFence;
          if (insideFence || line.includes('`')) continue;
          expect(line).not.toMatch(/(^|[^\\])<!/);
          expect(line).not.toMatch(/(^|[^\p{L}\p{N}\u200B])@(channel|here|everyone)(?![\p{L}\p{N}])/u);
        }
      }),
    );
  });

  it('gives the same result line by line as for the whole text, so streamed lines never change', () => {
    const markdown = 'intro <!here>\n```\ncode <x>\n```\n[a.example](https://b.example) & done';
    const state: SafeMarkdownState = {};
    const streamed = markdown.split('\n').map((line) => safeMarkdownLine(line, state)).join('\n');
    expect(streamed).toBe(safeMarkdown(markdown));
  });
});
