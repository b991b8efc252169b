import { afterAll, describe, expect, it } from 'vitest';
import { expectInert } from './inert.test-support.js';
import { blockKit, newWindow, parse, WORKSPACE_CONTEXT } from './page-modules.test-support.js';

const window = newWindow();
afterAll(() => window.happyDOM.close());

const html = (text: string, options?: { markdown?: boolean }) => blockKit.mrkdwnToHtml(text, WORKSPACE_CONTEXT, options);
const shown = (text: string, options?: { markdown?: boolean }) => parse(window, html(text, options));

describe('mrkdwn', () => {
  it('formats bold, italic, strike and inline code at word boundaries only', () => {
    expect(html('*bold* _italic_ ~strike~ `code`')).toBe('<strong>bold</strong> <em>italic</em> <s>strike</s> <code class="mk-code">code</code>');
    expect(html('restart_service and 2*3*4 stay as they are')).toBe('restart_service and 2*3*4 stay as they are');
    expect(html('*not bold * here')).toBe('*not bold * here');
    expect(html('*_both_*')).toBe('<strong><em>both</em></strong>');
    expect(html('_restart_service_')).toBe('<em>restart_service</em>');
  });

  it('shows code blocks verbatim, entities decoded, with no formatting inside', () => {
    const node = shown('before\n```{\n  "a": "*x* &lt;b&gt;"\n}```\nafter');
    const pre = node.querySelector('pre')!;
    expect(pre.textContent).toBe('{\n  "a": "*x* <b>"\n}');
    expect(pre.querySelector('strong')).toBeNull();
    expect(node.textContent).toBe(`before${pre.textContent}after`);
  });

  it('leaves an unclosed fence literal in mrkdwn, and runs it to the end in markdown', () => {
    expect(shown('```open').querySelector('pre')).toBeNull();
    expect(shown('```ts\nconst a = 1;', { markdown: true }).querySelector('pre')!.textContent).toBe('const a = 1;');
  });

  it('quotes lines that start with > or &gt; (as Slack sends them), and >>> to the end', () => {
    const node = shown('&gt; quoted *one*\n> two\nnot quoted');
    const quote = node.querySelector('blockquote')!;
    expect(quote.innerHTML).toBe('quoted <strong>one</strong><br>two');
    expect(node.textContent).toContain('not quoted');
    expect(shown('a\n>>> all\nof this').querySelector('blockquote')!.textContent).toBe('allof this');
  });

  it('lays out bullet and numbered lists, nested by indentation', () => {
    const node = shown('• one\n  ◦ nested\n1. first');
    const items = Array.from(node.querySelectorAll('.mk-li'));
    expect(items.map((item) => item.textContent)).toEqual(['•one', '◦nested', '1.first']);
    expect(items[1]!.className).toContain('mk-indent-1');
  });

  it('links only http(s) URLs, with labels, and decodes &amp; in them', () => {
    const node = shown('<https://example.com/a?b=1&amp;c=2|the docs> <http://plain.example> <mailto:a@b.c|mail> <javascript:alert(1)|click me>');
    const links = Array.from(node.querySelectorAll('a'));
    expect(links.map((link) => [link.getAttribute('href'), link.textContent])).toEqual([
      ['https://example.com/a?b=1&c=2', 'the docs'],
      ['http://plain.example/', 'http://plain.example'],
    ]);
    expect(links.every((link) => link.getAttribute('rel') === 'noopener noreferrer')).toBe(true);
    expect(node.textContent).toContain('click me');
    expect(node.textContent).toContain('mail');
  });

  it('shows user mentions by name from the snapshot, channels, broadcasts and groups', () => {
    const node = shown('<@U0ALICE> <@UBOT> <@U0NOBODY> <@U0NOBODY|carol> <#C0OPS> <#C0X|other> <!here> <!channel> <!subteam^S1|@oncall>');
    expect(node.textContent).toBe('@alice @countersign @U0NOBODY @carol #ops #other @here @channel @oncall');
    const me = parse(window, blockKit.mrkdwnToHtml('<@U0ALICE>', { ...WORKSPACE_CONTEXT, actingUserId: 'U0ALICE' }));
    expect(me.querySelector('.mk-mention-me')).not.toBeNull();
  });

  it('shows entities as the characters Slack means, and keeps &amp;lt; literal', () => {
    expect(shown('a &lt; b &amp;&amp; c &gt; d &amp;lt;').textContent).toBe('a < b && c > d &lt;');
  });

  it('fills <!date^…> tokens in the reader’s time zone, keeping the fallback as a title', () => {
    const node = shown('Requested <!date^1736954400^{date_short_pretty} at {time}|2025-01-15 15:20 UTC> and <!date^1736000000^{date_num} {time_secs}|x>');
    const dates = Array.from(node.querySelectorAll('time'));
    expect(dates.map((date) => date.textContent)).toEqual(['today at 3:20 PM', '2025-01-04 2:13:20 PM']);
    expect(dates[0]!.getAttribute('title')).toBe('2025-01-15 15:20 UTC');
  });

  it('shows known emoji shortcodes as emoji and leaves others as typed', () => {
    expect(html(':lock: Approval needed :white_check_mark: :not_an_emoji: 12:30:00')).toBe('🔒 Approval needed ✅ :not_an_emoji: 12:30:00');
    expect(blockKit.plainTextToHtml(':lock: <b>')).toBe('🔒 &lt;b&gt;');
    expect(blockKit.plainTextToHtml(':lock:', { emoji: false })).toBe(':lock:');
  });

  it('reads markdown (native streams, markdown blocks): **bold**, *italic*, links, headings, lists', () => {
    const node = shown('# Done\n**Restarted** *worker* ~~old~~ [logs](https://logs.example/x)\n- one\n- two', { markdown: true });
    expect(node.querySelector('.mk-heading')!.textContent).toBe('Done');
    expect(node.querySelector('strong')!.textContent).toBe('Restarted');
    expect(node.querySelector('em')!.textContent).toBe('worker');
    expect(node.querySelector('s')!.textContent).toBe('old');
    expect(node.querySelector('a')!.getAttribute('href')).toBe('https://logs.example/x');
    expect(Array.from(node.querySelectorAll('.mk-li')).map((item) => item.textContent)).toEqual(['•one', '•two']);
    expect(shown('[x](javascript:alert(1))', { markdown: true }).querySelector('a')).toBeNull();
  });

  it('shows markdown\'s backslash-escaped punctuation as the character, never as markup (mrkdwn keeps the backslash)', () => {
    // What safeMarkdown writes for `a < b & c`, and a literal `*` kept out of emphasis.
    const node = shown('If a \\< b \\& c, \\*not emphasis\\* *but \\* this*\n\\# not a heading\n\\- not an item \\\\ \\q', { markdown: true });
    expect(node.textContent).toBe('If a < b & c, *not emphasis* but * this# not a heading- not an item \\ \\q');
    expect(Array.from(node.querySelectorAll('em')).map((element) => element.textContent)).toEqual(['but * this']);
    expect(node.querySelector('.mk-heading, .mk-li')).toBeNull();
    expect(shown('a \\< b').textContent).toBe('a \\< b');
  });
});

describe('mrkdwn from an attacker', () => {
  const attacks = [
    '<script>alert(1)</script>',
    '&lt;script&gt;alert(1)&lt;/script&gt;',
    '<img src=x onerror=alert(1)>',
    '&lt;img src=x onerror=alert(1)&gt;',
    '<javascript:alert(1)|click>',
    '<JaVaScRiPt:alert(1)>',
    '<data:text/html,<script>alert(1)</script>|x>',
    '<https://ok.example" onmouseover="alert(1)|x>',
    '*<img src=x onerror=alert(1)>*',
    '```<script>alert(1)</script>```',
    '`<img src=x onerror=alert(1)>`',
    '<@U0ALICE|"><img src=x onerror=alert(1)>>',
    '<!date^1^{date}^javascript:alert(1)|x>',
    '"><svg onload=alert(1)>',
  ];

  for (const attack of attacks) {
    it(`renders ${JSON.stringify(attack)} inert`, () => {
      for (const markdown of [false, true]) {
        const node = shown(attack, { markdown });
        expectInert(node);
        expect(node.querySelector('img, svg, script')).toBeNull();
      }
    });
  }

  it('shows typed markup as text', () => {
    expect(shown('&lt;script&gt;alert(1)&lt;/script&gt;').textContent).toBe('<script>alert(1)</script>');
  });
});
