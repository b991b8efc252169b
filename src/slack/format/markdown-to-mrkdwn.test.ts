import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { markdownToMrkdwn } from './markdown-to-mrkdwn.js';

const ZWSP = '\u200B';

describe('markdownToMrkdwn', () => {
  it.each([
    ['bold', 'a **bold** and __also bold__ word', 'a *bold* and *also bold* word'],
    ['italic', 'an *italic* and _italic_ word', 'an _italic_ and _italic_ word'],
    ['bold italic', '***both***', '*_both_*'],
    ['strikethrough', '~~gone~~', '~gone~'],
    ['heading', '## Rollout **plan** ##', '*Rollout plan*'],
    ['bullets, keeping nesting', '- one\n  * two\n    + three', '• one\n  • two\n    • three'],
    ['task list', '- [ ] todo\n- [x] done', '• ☐ todo\n• ☑ done'],
    ['numbered list', '1. first\n2) second', '1. first\n2. second'],
    ['quote', '> quoted **text**\n>> nested', '> quoted *text*\n> nested'],
    ['thematic break', '---', '──────────'],
    ['snake_case and arithmetic stay as they are', 'my_var_name = 2 * 3 * 4', 'my_var_name = 2 * 3 * 4'],
    ['link', 'see [the runbook](https://wiki.example.com/runbook)', 'see <https://wiki.example.com/runbook|the runbook>'],
    ['link to the address in the label', '[wiki.example.com](https://wiki.example.com/x)', '<https://wiki.example.com/x|wiki.example.com>'],
    ['image', '![graph](https://example.com/g.png)', '<https://example.com/g.png|graph>'],
    ['autolink', '<https://example.com/a>', '<https://example.com/a>'],
    ['bare URL, untouched apart from & escaping', 'go to https://example.com/a_b_c?x=1&y=*2*.', 'go to https://example.com/a_b_c?x=1&amp;y=*2*.'],
    ['URL with parentheses', '[Foo](https://en.wikipedia.org/wiki/Foo_(bar))', '<https://en.wikipedia.org/wiki/Foo_(bar)|Foo>'],
    ['inline code kept verbatim', 'run `a **b** <c> & d`', 'run `a **b** &lt;c&gt; &amp; d`'],
    ['fenced code kept verbatim, language dropped', '```bash\necho "**hi**" > out && cat <in\n```', '```\necho "**hi**" &gt; out &amp;&amp; cat &lt;in\n```'],
    ['tilde fence', '~~~\n~~not strike~~\n~~~', '```\n~~not strike~~\n```'],
    ['unclosed fence runs to the end', '```\ncode', '```\ncode\n```'],
    ['table becomes monospace', '| a | b |\n|---|---|\n| **1** | 2 |', '```\n| a | b |\n|---|---|\n| **1** | 2 |\n```'],
    ['escaping', 'a < b && c > d', 'a &lt; b &amp;&amp; c &gt; d'],
    ['Windows line endings', 'a\r\n**b**', 'a\n*b*'],
  ])('converts %s', (_name, markdown, mrkdwn) => {
    expect(markdownToMrkdwn(markdown)).toBe(mrkdwn);
  });

  describe('with hostile model output', () => {
    it.each([
      ['<!channel>', 'hey <!channel>', `hey @${ZWSP}channel`],
      ['<!here>', '<!here> look', `@${ZWSP}here look`],
      ['<!everyone>', '<!everyone>', `@${ZWSP}everyone`],
      ['<!here|here>', '<!here|here>', `@${ZWSP}here`],
      ['a user group', '<!subteam^S123|@oncall>', `@${ZWSP}oncall`],
      ['a user group without a label', '<!subteam^S123>', `@${ZWSP}group`],
      ['plain @channel', 'ping @channel, @HERE and @everyone!', `ping @${ZWSP}channel, @${ZWSP}HERE and @${ZWSP}everyone!`],
      ['@here inside emphasis', '**@here**', `*@${ZWSP}here*`],
      ['a ping inside a link label', '[<!channel>](https://example.com)', '<https://example.com/|&lt;!channel&gt;>'],
      ['a ping nested in a Slack link', '<https://x.com|<!channel>>', `&lt;https://x.com|@${ZWSP}channel&gt;`],
      ['a ping in inline code', '`<!here>`', '`&lt;!here&gt;`'],
      ['a ping in a code block', '```\n<!here> @channel\n```', `\`\`\`\n&lt;!here&gt; @${ZWSP}channel\n\`\`\``],
      ['a Slack link whose label is another URL', '<https://evil.example|https://good.example>', 'https://good.example (<https://evil.example/>)'],
      ['a markdown link whose label is another URL', '[https://bank.com](https://evil.example/login)', 'https://bank.com (<https://evil.example/login>)'],
      ['a label naming another domain', '[bank.com](https://bank.com.evil.io)', 'bank.com (<https://bank.com.evil.io/>)'],
      ['a label hiding a domain among words', '[log in at paypal.com now](https://evil.io)', 'log in at paypal.com now (<https://evil.io/>)'],
      ['a label naming another mailbox', '[help@bank.com](mailto:phish@evil.io)', 'help@bank.com (<mailto:phish@evil.io>)'],
      ['a javascript: link', '[click](javascript:alert(1))', 'click (javascript:alert(1))'],
      ['a pipe that would end the URL early', '[ok](https://example.com/a|b)', '<https://example.com/a%7Cb|ok>'],
      // To CommonMark this is a link to `https://example.com/a|<!here>`: its target is encoded, not shown as a ping.
      ['a ping smuggled into a URL', '[ok](https://example.com/a|<!here>)', '<https://example.com/a%7C%3C!here%3E|ok>'],
      ['a stray fence that would swallow the rest', 'text ``` more', `text \`${ZWSP}\`${ZWSP}\` more`],
      ['a fake special mention', '<!date^1^{x}|y><!foo>', '<!date^1^{x}|y>@\u200Bfoo'],
      ['an HTML tag', '<script>alert(1)</script>', '&lt;script&gt;alert(1)&lt;/script&gt;'],
      ['an email address with here in it', 'mail ops@here.example', 'mail ops@here.example'],
    ])('neutralises %s', (_name, markdown, mrkdwn) => {
      expect(markdownToMrkdwn(markdown)).toBe(mrkdwn);
    });

    it('keeps mentions of people who may be notified, and channel links', () => {
      expect(markdownToMrkdwn('ask <@U123ABC> or <@W0ALICE|alice> in <#C123ABC|ops>', { mentionableUserIds: ['U123ABC', 'W0ALICE'] })).toBe(
        'ask <@U123ABC> or <@W0ALICE> in <#C123ABC|ops>',
      );
    });

    it('shows anyone else it names as text that notifies no one', () => {
      expect(markdownToMrkdwn('ask <@U123ABC>, <@U0MALLORY|mallory> and <@W0EVE>', { mentionableUserIds: new Set(['U123ABC']) })).toBe(
        `ask <@U123ABC>, @${ZWSP}mallory and @${ZWSP}W0EVE`,
      );
      expect(markdownToMrkdwn('hi <@U123ABC|alice> and <@here>')).toBe(`hi @${ZWSP}alice and @${ZWSP}here`);
    });

    it('leaves no way to ping or inject markup, whatever the input', () => {
      const piece = fc.constantFrom('<!channel>', '<!here|here>', '<@U1ABC>', '@here', '<', '>', '&', '[', ']', '(', ')', '`', '```', '*', '_', '~', '|', '\n', ' ', 'https://x.io', 'a.com', '!', '#', '- ', '> ', 'é');
      fc.assert(
        fc.property(fc.array(piece, { maxLength: 60 }), (pieces) => {
          const output = markdownToMrkdwn(pieces.join(''));
          expect(output).not.toMatch(/<[!@#]/);
          const outsideLinks = output.replace(/<(https?:\/\/|mailto:)[^<>\s]*>/g, ' ');
          expect(outsideLinks).not.toMatch(/(^|[^\p{L}\p{N}])@(here|channel|everyone)(?![\p{L}\p{N}])/iu);
          // Every `<` left is one of our own link tokens.
          for (const token of output.match(/<[^>]*>?/g) ?? []) expect(token).toMatch(/^<(https?:\/\/|mailto:)[^<>\s]*>$/);
        }),
        { numRuns: 5000 },
      );
    });
  });
});
