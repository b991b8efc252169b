import { micromark } from 'micromark';
import { gfm, gfmHtml } from 'micromark-extension-gfm';
import { describe, expect, it } from 'vitest';
import { markdownToMrkdwn } from './markdown-to-mrkdwn.js';
import { isSafeMarkdown, safeMarkdown } from './safe-markdown.js';

/** How a CommonMark reader (micromark's own HTML output) links the label: the `href` of each `<a>` by its text. */
function linksOf(markdown: string): Array<{ href: string; text: string }> {
  const html = micromark(markdown, { extensions: [gfm()], htmlExtensions: [gfmHtml()] });
  return [...html.matchAll(/<a href="([^"]*)"[^>]*>(.*?)<\/a>/g)].map((match) => ({ href: match[1]!, text: match[2]! }));
}

describe('a reference link whose label is defined twice', () => {
  // The second definition's label is written otherwise (case, whitespace): CommonMark takes both as one label.
  it.each([
    ['the same label', '[x]: https://evil.example/login\n[x]: https://bank.example/login\n\nLog in at [bank.example/login][x]\n'],
    ['a label written otherwise', '[Sign  In]: https://evil.example/login\n[sign\tin]: https://bank.example/login\n\nLog in at [bank.example/login][SIGN IN]\n'],
  ])('CommonMark uses the first definition (%s): a label naming the second one’s address is not left as a link to the first', (_name, answer) => {
    const safe = safeMarkdown(answer);
    // The label names bank.example; Slack, reading the text as CommonMark, links it to the first definition.
    const disguised = linksOf(safe).filter((link) => link.text.includes('bank.example') && !link.href.startsWith('https://bank.example/'));
    expect(disguised).toEqual([]);
    expect(isSafeMarkdown(answer)).toBe(false);
    expect(markdownToMrkdwn(answer)).toBe('Log in at bank.example/login (<https://evil.example/login>)');
  });

  it('a label naming the first definition’s address stays a link to it, in both modes', () => {
    const answer = '[x]: https://bank.example/login\n[x]: https://evil.example/login\n\nLog in at [bank.example/login][x]\n';
    expect(isSafeMarkdown(answer)).toBe(true);
    expect(linksOf(safeMarkdown(answer))).toEqual([{ href: 'https://bank.example/login', text: 'bank.example/login' }]);
    expect(markdownToMrkdwn(answer)).toBe('Log in at <https://bank.example/login|bank.example/login>');
  });
});
