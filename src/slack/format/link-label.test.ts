import { describe, expect, it } from 'vitest';
import { linkLabelIsHonest } from './link-label.js';
import { markdownToMrkdwn } from './markdown-to-mrkdwn.js';
import { safeMarkdown } from './safe-markdown.js';

/**
 * A label that names another address must not stay the clickable text of a link (README: "a link
 * whose text names another address shows its real target"). An invisible character at the edge of
 * the address, or one inside `https://`, must not hide it from the check: Slack shows the label exactly
 * as "https://paypal.com" / "paypal.com".
 */
const DISGUISED: Array<[string, string]> = [
  ['a zero-width space before the URL', '[\u200Bhttps://paypal.com/login](https://evil.example/login)'],
  ['a zero-width space inside the scheme', '[https\u200B://paypal.com/login](https://evil.example/login)'],
  ['a zero-width space after the domain', '[paypal.com\u200B](https://evil.example/login)'],
  ['a word joiner after the domain', '[Sign in at paypal.com\u2060](https://evil.example/login)'],
  ['a Slack link with a zero-width space after the domain', '<https://evil.example/login|paypal.com\u200B>'],
];

describe('link labels disguised with invisible characters', () => {
  it.each(DISGUISED)('update mode (mrkdwn): %s shows the real target', (_name, markdown) => {
    const mrkdwn = markdownToMrkdwn(markdown);
    // Honest rendering: the label as text, then `(<https://evil.example/login>)`.
    expect(mrkdwn).not.toMatch(/<https:\/\/evil\.example\/login\|/);
    expect(mrkdwn).toContain('(<https://evil.example/login>)');
  });

  it.each(DISGUISED.filter(([name]) => !name.startsWith('a Slack link')))('native mode (markdown_text): %s shows the real target', (_name, markdown) => {
    const markdownText = safeMarkdown(markdown);
    expect(markdownText).not.toMatch(/\]\(https:\/\/evil\.example\/login\)/);
    expect(markdownText).toContain('(https://evil.example/login)');
  });

  it('for comparison: the same labels without the invisible character are caught', () => {
    expect(markdownToMrkdwn('[https://paypal.com/login](https://evil.example/login)')).toBe('https://paypal.com/login (<https://evil.example/login>)');
    expect(markdownToMrkdwn('[paypal.com](https://evil.example/login)')).toBe('paypal.com (<https://evil.example/login>)');
  });
});

/** Nor may a domain glued to ordinary (non-ASCII) punctuation that a reader skips over. */
describe('link labels naming a domain next to typographic punctuation', () => {
  it.each([
    ['a typographic apostrophe', "[paypal.com\u2019s sign-in page](https://evil.example/login)"],
    ['an em dash', '[paypal.com\u2014sign in](https://evil.example/login)'],
    ['an ideographic full stop', '[paypal\u3002com](https://evil.example/login)'],
  ])('%s: the real target is shown', (_name, markdown) => {
    expect(markdownToMrkdwn(markdown)).toContain('(<https://evil.example/login>)');
    expect(safeMarkdown(markdown)).toContain('(https://evil.example/login)');
  });
});

describe('linkLabelIsHonest', () => {
  const target = 'https://evil.example/login';

  it.each([
    ['a zero-width non-joiner inside the domain', 'pay\u200Cpal.com'],
    ['a soft hyphen', 'paypal\u00AD.com'],
    ['a right-to-left override', '\u202Emoc.lapyap'],
    ['a Hangul filler', 'paypal.com\u3164'],
    ['a Mongolian vowel separator', 'paypal.com\u180E'],
    ['a braille blank', 'paypal.com\u2800login'],
    ['a variation selector', 'paypal.com\uFE0F'],
    ['a tag character', 'paypal.com\u{E0041}'],
    ['a control character', 'paypal.com\u0007'],
    ['fullwidth letters', '\uFF50\uFF41\uFF59\uFF50\uFF41\uFF4C\uFF0E\uFF43\uFF4F\uFF4D'],
    ['a halfwidth ideographic full stop', 'paypal\uFF61com'],
    ['an ASCII apostrophe', "paypal.com's login"],
    ['curly quotes', '\u201Cpaypal.com\u201D'],
    ['corner brackets', '\u300Cpaypal.com\u300D'],
    ['an emoji glued to the domain', 'paypal.com\u{1F512}'],
    ['a domain after another scheme-like word', 'see:https://paypal.com'],
    ['a subdomain of another host', 'login.paypal.com/account'],
    ['an IP address', '10.0.0.5 admin'],
  ])('%s names another address', (_name, label) => {
    expect(linkLabelIsHonest({ url: target, label })).toBe(false);
  });

  it.each([
    ['words', 'the runbook', 'https://wiki.example.com/runbook'],
    ['one word', 'docs', 'https://wiki.example.com/'],
    ['the target host', 'wiki.example.com', 'https://wiki.example.com/runbook'],
    ['the target host with www.', 'www.example.com', 'https://example.com/'],
    ['the target host in a sentence with typographic punctuation', 'wiki.example.com\u2019s runbook \u2014 read it', 'https://wiki.example.com/runbook'],
    ['the target URL', 'https://wiki.example.com/runbook?from=other.example', 'https://wiki.example.com/runbook?from=other.example'],
    ['a file path', 'docs/setup.md', 'https://github.com/example/repo/blob/main/docs/setup.md'],
    ['the target mailbox', 'help@bank.example', 'mailto:help@bank.example'],
    ['an emoji with joiners and a variation selector', '\u{1F9D1}\u200D\u{1F4BB} dev docs \u26A0\uFE0F', 'https://wiki.example.com/dev'],
    ['non-Latin words', 'руководство по запуску', 'https://wiki.example.com/runbook'],
  ])('%s stays the label', (_name, label, url) => {
    expect(linkLabelIsHonest({ url, label })).toBe(true);
  });
});
