import { afterAll, describe, expect, it } from 'vitest';
import { codeNodes, parseMarkdown } from '../../../slack/format/parse-markdown.js';
import { blockKit, newWindow, parse, WORKSPACE_CONTEXT } from './page-modules.test-support.js';

const window = newWindow();
afterAll(() => window.happyDOM.close());

/** The code the page draws in a markdown answer: blocks, then spans, each in document order. */
function pageCode(markdown: string) {
  const node = parse(window, blockKit.mrkdwnToHtml(markdown, WORKSPACE_CONTEXT, { markdown: true }));
  return { blocks: Array.from(node.querySelectorAll('pre')).map((pre) => pre.textContent), spans: Array.from(node.querySelectorAll('code')).map((code) => code.textContent) };
}

/**
 * The code the bot's CommonMark parser finds, which safeMarkdown leaves verbatim and Slack shows as
 * text; a span's line endings are shown as spaces.
 */
function botCode(markdown: string) {
  const code = codeNodes(parseMarkdown(markdown));
  return { blocks: code.filter((node) => node.type === 'code').map((node) => node.value), spans: code.filter((node) => node.type === 'inlineCode').map((node) => node.value.replaceAll('\n', ' ')) };
}

const LINK = '<https://evil.example/steal|https://docs.example/runbook>';

/**
 * The page and the bot must agree on what is code (README: the sandbox shows what Slack shows):
 * code the page took for text would draw the `<url|label>` the bot left verbatim in it as a link.
 */
const CASES: Array<[string, string]> = [
  ['a backtick fence', `\`\`\`\n${LINK}\n\`\`\``],
  ['a fence with an info string', `\`\`\`bash\nkubectl get pods ${LINK}\n\`\`\``],
  ['a tilde fence', `~~~\n${LINK}\n~~~`],
  ['a fence that a shorter run does not close', `~~~~\na\n~~~\n${LINK}\n~~~~\nafter`],
  ['a fence of the other character inside', `\`\`\`\n~~~\n${LINK}\n\`\`\``],
  ['an unclosed fence, to the end', `text\n\n~~~\n${LINK}`],
  ['an indented fence, its indentation taken off the lines', `   \`\`\`\n   ${LINK}\n  two\n\`\`\``],
  ['a fence interrupting a paragraph', `Run this:\n\`\`\`\n${LINK}\n\`\`\``],
  ['a backtick fence whose info string has a backtick (no fence)', `\`\`\` a\`b\n${LINK}\n\`\`\``],
  ['an indented block', `The runbook:\n\n    ${LINK}\n    second line`],
  ['an indented block across a blank line', `    one\n\n    ${LINK}\n\nafter`],
  ['an indented block with a tab', `\t${LINK}`],
  ['an indented block after a heading', `# Runbook\n    ${LINK}`],
  ['an indented line continuing a paragraph (no code)', `Text\n    ${LINK.replace('<', '\\<')}`],
  ['an indented line in a list item (its paragraph, no code)', `- item\n\n    ${LINK.replace('<', '\\<')}`],
  ['an indented block in a list item', `- item\n\n      ${LINK}`],
  ['an indented block in a nested list item', `- a\n  - b\n\n        ${LINK}`],
  ['a fence in a numbered list item', `1. Run:\n   \`\`\`bash\n   ${LINK}\n   \`\`\`\n2. Then check.`],
  ['a fence opening a list item', `- \`\`\`\n  ${LINK}\n  \`\`\`\n- next`],
  ['a fence ended by its list item', `- \`\`\`\n  ${LINK}\nout`],
  ['a fence after a list', `- one\n\n\`\`\`\n${LINK}\n\`\`\``],
  ['an item with five spaces: an indented block in it', `-      ${LINK}`],
  ['a fence in a block quote', `> \`\`\`\n> ${LINK}\n> \`\`\``],
  ['an indented block in a block quote', `>     ${LINK}`],
  ['a single-backtick span', `a \`${LINK}\` b`],
  ['a double-backtick span with a backtick inside', `and \`\`x\`${LINK}\`y\`\`. Done.`],
  ['a span with padding', `\`\` \`${LINK}\` \`\``],
  ['a triple-backtick span in a line', `see \`\`\`${LINK}\`\`\` here`],
  ['an unmatched run, then a span', `\`\`not closed \`${LINK}\``],
  ['a span in a list item and a heading', `# \`${LINK}\`\n- \`x\` and \`\`${LINK}\`\``],
  ['a span in emphasis', `*see \`${LINK}\`*`],
  ['an escaped backtick (no span)', `\\\`not code\\\` and \`code\``],
  ['a span across the lines of a paragraph', `See \`\`the\n${LINK}\n\`\` above`],
  ['an indented block after a setext heading', `Runbook\n---\n    ${LINK}`],
  ['an indented block after an empty item next to another', `- a\n- \n      ${LINK}`],
  ['an indented block after a quote whose content is code (not lazy)', `>     one\n        ${LINK}`],
  ['an indented block after a quote with an open fence (not lazy)', `> \`\`\`\n> one\n    ${LINK}`],
  ['an indented line continuing a quoted paragraph (no code)', `> quoted\n    ${LINK.replace('<', '\\<')}`],
  ['a fence in a second item, ended by a quote', `1. a\n2. b\n   \`\`\`\n   ${LINK}\n> after`],
];

describe('what the sandbox page draws as code in markdown', () => {
  it.each(CASES)('%s: the same as the bot’s parser', (_name, markdown) => {
    expect(pageCode(markdown)).toEqual(botCode(markdown));
  });

  it.each(CASES)('%s: no link to evil.example labelled as another address', (_name, markdown) => {
    const node = parse(window, blockKit.mrkdwnToHtml(markdown, WORKSPACE_CONTEXT, { markdown: true }));
    const disguised = Array.from(node.querySelectorAll('a')).filter((link) => link.getAttribute('href')!.includes('evil.example') && !link.textContent!.includes('evil.example'));
    expect(disguised).toEqual([]);
  });
});

describe('markdown nested deep', () => {
  it('deeper than the bot reads markup: drawn as text, as the bot has it', () => {
    const markdown = `${'> '.repeat(40)}\`\`\`\n${LINK}`;
    expect(botCode(markdown)).toEqual({ blocks: [], spans: [] });
    const node = parse(window, blockKit.mrkdwnToHtml(markdown, WORKSPACE_CONTEXT, { markdown: true }));
    expect(node.querySelector('blockquote, pre, code')).toBeNull();
  });

  it('many lines of nested quotes: drawn without exhausting the stack (`>>>` is not Slack’s quote-to-the-end here)', () => {
    const node = parse(window, blockKit.mrkdwnToHtml('>>>>>> x\n'.repeat(5000), WORKSPACE_CONTEXT, { markdown: true }));
    expect(node.querySelectorAll('blockquote')).toHaveLength(6);
  });
});
