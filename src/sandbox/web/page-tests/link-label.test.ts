import { afterAll, describe, expect, it } from 'vitest';
import { labelNamesAnotherAddress } from '../../../slack/format/link-label.js';
import { blockKit, newWindow, parse, WORKSPACE_CONTEXT } from './page-modules.test-support.js';

const window = newWindow();
afterAll(() => window.happyDOM.close());

/** The page's copy of the rule (plain JavaScript, served as-is), loaded as the page loads it. */
const page = (await import(new URL('../public/link-label.js', import.meta.url).href)) as { labelNamesAnotherAddress(label: string, url: string): boolean };

const links = (markdown: string, options?: { markdown?: boolean }) =>
  Array.from(parse(window, blockKit.mrkdwnToHtml(markdown, WORKSPACE_CONTEXT, options)).querySelectorAll('a')).map((link) => [link.getAttribute('href'), link.textContent]);

/** Labels from the bot's own tests of the rule (src/slack/format/link-label.test.ts), and ordinary ones. */
const LABELS: Array<[string, string]> = [
  ['https://docs.example/runbook', 'https://evil.example/steal'],
  ['https://docs.example/runbook', 'https://docs.example/other'],
  ['\u200Bhttps://paypal.com/login', 'https://evil.example/login'],
  ['https\u200B://paypal.com/login', 'https://evil.example/login'],
  ['paypal.com\u200B', 'https://evil.example/login'],
  ['Sign in at paypal.com\u2060', 'https://evil.example/login'],
  ['paypal.com\u2019s sign-in page', 'https://evil.example/login'],
  ['paypal.com\u2014sign in', 'https://evil.example/login'],
  ['paypal\u3002com', 'https://evil.example/login'],
  ['pay\u200Cpal.com', 'https://evil.example/login'],
  ['\u202Emoc.lapyap', 'https://evil.example/login'],
  ['paypal.com\u3164', 'https://evil.example/login'],
  ['paypal.com\uFE0F', 'https://evil.example/login'],
  ['paypal.com\u0007', 'https://evil.example/login'],
  ['\uFF50\uFF41\uFF59\uFF50\uFF41\uFF4C\uFF0E\uFF43\uFF4F\uFF4D', 'https://evil.example/login'],
  ["paypal.com's login", 'https://evil.example/login'],
  ['\u201Cpaypal.com\u201D', 'https://evil.example/login'],
  ['paypal.com\u{1F512}', 'https://evil.example/login'],
  ['see:https://paypal.com', 'https://evil.example/login'],
  ['login.paypal.com/account', 'https://evil.example/login'],
  ['10.0.0.5 admin', 'https://evil.example/login'],
  ['**paypal.com**', 'https://evil.example/login'],
  ['the runbook', 'https://wiki.example.com/runbook'],
  ['wiki.example.com', 'https://wiki.example.com/runbook'],
  ['www.example.com', 'https://example.com/'],
  ['wiki.example.com\u2019s runbook \u2014 read it', 'https://wiki.example.com/runbook'],
  ['https://wiki.example.com/runbook?from=other.example', 'https://wiki.example.com/runbook?from=other.example'],
  ['docs/setup.md', 'https://github.com/example/repo/blob/main/docs/setup.md'],
  ['help@bank.example', 'mailto:help@bank.example'],
  ['\u{1F9D1}\u200D\u{1F4BB} dev docs \u26A0\uFE0F', 'https://wiki.example.com/dev'],
  ['руководство по запуску', 'https://wiki.example.com/runbook'],
];

describe('the page’s rule for a link whose label names another address', () => {
  it.each(LABELS)('%s → %s: the same answer as the bot’s', (label, url) => {
    expect(page.labelNamesAnotherAddress(label, url)).toBe(labelNamesAnotherAddress({ label: label.replace(/\*\*|__|~~|`/g, '').trim(), target: new URL(url) }));
  });

  it('shows such a link the bot’s way, the real target as the link, in mrkdwn and in markdown', () => {
    const target = [['https://evil.example/steal', 'https://evil.example/steal']];
    expect(links('<https://evil.example/steal|https://docs.example/runbook>')).toEqual(target);
    expect(links('[https://docs.example/runbook](https://evil.example/steal)', { markdown: true })).toEqual(target);
    expect(links('[paypal\\.com](https://evil.example/steal)', { markdown: true })).toEqual(target);
    expect(parse(window, blockKit.mrkdwnToHtml('<https://evil.example/steal|paypal.com>', WORKSPACE_CONTEXT)).textContent).toBe('paypal.com (https://evil.example/steal)');
    const richText = { type: 'rich_text', elements: [{ type: 'rich_text_section', elements: [{ type: 'link', url: 'https://evil.example/steal', text: 'https://docs.example/runbook' }] }] };
    const node = parse(window, blockKit.renderBlocks([richText], WORKSPACE_CONTEXT));
    expect(Array.from(node.querySelectorAll('a')).map((link) => [link.getAttribute('href'), link.textContent])).toEqual(target);
  });

  it('keeps an honest label as the link', () => {
    expect(links('<https://wiki.example.com/runbook|the runbook>')).toEqual([['https://wiki.example.com/runbook', 'the runbook']]);
    expect(links('[wiki.example.com](https://wiki.example.com/runbook)', { markdown: true })).toEqual([['https://wiki.example.com/runbook', 'wiki.example.com']]);
  });
});
