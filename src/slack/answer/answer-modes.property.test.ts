import fc from 'fast-check';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { boundedShrinking } from '../../../test/helpers/bounded-shrinking.js';
import { markdownToMrkdwn } from '../format/markdown-to-mrkdwn.js';
import { fakeStreamingSlack, misreadMessages } from '../../../test/helpers/streamed-answer-messages.js';
import { codeNodes, endOf, parseMarkdown, startOf } from '../format/parse-markdown.js';
import { isSafeMarkdown, safeMarkdown } from '../format/safe-markdown.js';
import { createNativeAnswerStream } from './native-answer-stream.js';
import { renderAnswer } from './render-answer.js';

/**
 * Both answer modes against generated CommonMark: fences of both kinds and lengths with info
 * strings (some with backticks, which open no backtick fence), lists with fences indented right
 * and wrong, block quotes with lazy lines, unclosed fences, code spans. The parser decides what is
 * code; every ping, mention of an outsider or disguised Slack link it puts outside code must be
 * defused in both modes, and what it puts inside code must come out verbatim, as code, in both.
 */

const MENTIONABLE = ['U0IN'];
/** What must never reach Slack live from outside code. */
const DANGER = /<!channel>|<!here>|<@U0OUT(?:\|mallory)?>|<@W0OUT>|<https?:\/\/evil\.example\|[^<>]*>/g;
const PLAIN_PING = /(^|[^\p{L}\p{N}\u200B])@(here|channel|everyone)(?![\p{L}\p{N}])/u;

const payload = fc.constantFrom(
  '<!channel>',
  '<!here>',
  '<@U0OUT>',
  '<@U0OUT|mallory>',
  '<@W0OUT>',
  '<@U0IN>',
  '<http://evil.example|good.example>',
  '<https://evil.example|bank.example login>',
  '@here',
  '[bank.example](https://evil.example)',
  'a & b < c',
  'text',
  '**bold**',
  '`',
  '~~~',
  '```',
);
const words = fc.array(payload, { minLength: 1, maxLength: 4 }).map((parts) => parts.join(' '));
const codeSpan = fc.tuple(payload, fc.constantFrom('`', '``')).map(([content, ticks]) => `${ticks} ${content} ${ticks}`);
const inlineLine = fc.array(fc.oneof(words, codeSpan), { minLength: 1, maxLength: 3 }).map((parts) => parts.join(' '));

const fence = fc
  .record({
    mark: fc.constantFrom('`', '~'),
    length: fc.integer({ min: 3, max: 6 }),
    info: fc.constantFrom('', 'js', 'ok`', '`x', 'a`b c', ' sh'),
    indent: fc.integer({ min: 0, max: 5 }),
    body: fc.array(fc.oneof(payload, inlineLine), { maxLength: 3 }),
    closing: fc.constantFrom('same', 'longer', 'shorter', 'other', 'none'),
  })
  .map(({ mark, length, info, indent, body, closing }) => {
    const close = { same: mark.repeat(length), longer: mark.repeat(length + 1), shorter: mark.repeat(length - 1), other: (mark === '`' ? '~' : '`').repeat(length), none: undefined }[closing];
    return [`${' '.repeat(indent)}${mark.repeat(length)}${info}`, ...body, ...(close === undefined ? [] : [`${' '.repeat(Math.min(indent, 3))}${close}`])];
  });
const leaf = fc.oneof(
  inlineLine.map((line) => [line]),
  fc.tuple(inlineLine, inlineLine).map((lines) => [...lines]),
  inlineLine.map((line) => [`## ${line}`]),
  payload.map((content) => [`    ${content}`]),
  // HTML blocks: shown as text, they must not change what the lines around them are.
  fc.constantFrom<string[]>(['<div>'], ['<!-- note -->'], ['</span>', '```']),
  fc.constant<string[]>(['']),
  fence,
);
/** A list item whose continuation lines are indented by 0 to 4 spaces or a tab: enough, or not. */
const listItemOf = (content: fc.Arbitrary<string[]>) =>
  fc.tuple(fc.constantFrom('- ', '1. ', '* ', '2. ', '10) '), fc.array(content, { minLength: 1, maxLength: 3 }), fc.constantFrom('', ' ', '  ', '   ', '    ', '\t')).map(([marker, blocks, indent]) => {
    const [first = '', ...rest] = blocks.flat();
    return [`${marker}${first}`, ...rest.map((line) => (line === '' ? '' : `${indent}${line}`))];
  });
/** A block quote, some of whose lines leave out the `>` (lazy lines). */
const quoteOf = (content: fc.Arbitrary<string[]>) =>
  fc.tuple(fc.array(content, { minLength: 1, maxLength: 3 }), fc.array(fc.boolean(), { minLength: 12, maxLength: 12 })).map(([blocks, lazy]) =>
    blocks.flat().map((line, index) => (index > 0 && lazy[index % lazy.length] ? line : `> ${line}`)),
  );
const nested = fc.oneof(leaf, listItemOf(leaf), quoteOf(leaf));
const markdownDocument = fc.array(fc.oneof(leaf, leaf, listItemOf(nested), quoteOf(nested)), { minLength: 1, maxLength: 6 }).map((blocks) => blocks.flat().join('\n'));
/** A longer answer, its blocks after a blank line or not: one a rollover can cut cleanly often enough. */
const longerDocument = fc
  .array(fc.tuple(fc.oneof(leaf, leaf, fence, listItemOf(nested), quoteOf(nested)), fc.constantFrom('\n', '\n\n')), { minLength: 1, maxLength: 16 })
  .map((blocks) => blocks.map(([lines, separator]) => lines.join('\n') + separator).join(''));

interface CodeView {
  values: string[];
  inCode: (offset: number) => boolean;
}

function codeView(markdown: string): CodeView {
  const nodes = codeNodes(parseMarkdown(markdown));
  return {
    values: nodes.map((node) => node.value),
    inCode: (offset) => nodes.some((node) => startOf(node) <= offset && offset < endOf(node)),
  };
}

/** Dangerous tokens in markdown, but not those whose `<` is backslash-escaped (shown as written). */
function dangerIn(markdown: string, view: CodeView): { inCode: number; outside: string[] } {
  const found = [...markdown.matchAll(DANGER)].filter((match) => view.inCode(match.index) || /^(?:\\\\)*$/.test(/\\*$/.exec(markdown.slice(0, match.index))?.[0] ?? ''));
  return { inCode: found.filter((match) => view.inCode(match.index)).length, outside: found.filter((match) => !view.inCode(match.index)).map((match) => match[0]) };
}

/** What a reader of mrkdwn sees: entities decoded, zero-width spaces gone. */
function decodeMrkdwn(text: string): string {
  return text.replaceAll('\u200B', '').replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
}

/** The lines inside ``` blocks of rendered mrkdwn (``` anywhere opens or closes one), quote marks and indentation taken off. */
function mrkdwnCodeLines(mrkdwn: string): string[] {
  return mrkdwn
    .split('```')
    .filter((_segment, index) => index % 2 === 1)
    .flatMap((segment) => segment.split('\n').map((line) => stripPrefix(decodeMrkdwn(line))));
}

const stripPrefix = (line: string) => line.replace(/^(?:> ?|[ \t])*/, '');

/** `update` mode (`chat.update` with mrkdwn): safe, and the parser's code kept verbatim as code. */
function checkUpdateMode(markdown: string, input: CodeView): void {
  const mrkdwn = markdownToMrkdwn(markdown, { mentionableUserIds: MENTIONABLE });
  // Code is escaped too in mrkdwn, so nothing dangerous is left anywhere; every `<` is a token of ours.
  expect(mrkdwn.match(DANGER)).toBeNull();
  for (const token of mrkdwn.match(/<[^>]*>?/g) ?? []) expect(token).toMatch(/^<(?:(?:https?:\/\/|mailto:)[^<>\s]*|@U0IN)>$/);
  expect(mrkdwn.replace(/<[^<>]*>/g, ' ')).not.toMatch(PLAIN_PING);
  const codeLines = new Set(mrkdwnCodeLines(mrkdwn));
  const codeNodesFound = codeNodes(parseMarkdown(markdown));
  for (const node of codeNodesFound) {
    // A code span's line endings are spaces, as CommonMark says.
    if (node.type === 'inlineCode') expect(decodeMrkdwn(mrkdwn)).toContain(`\`${node.value.replaceAll('`', '\u02CB').replaceAll('\n', ' ')}\``);
    else if (node.value.trim() !== '') for (const line of node.value.split('\n')) if (line.trim() !== '') expect(codeLines).toContain(stripPrefix(line));
  }
}

/** `native` mode (`markdown_text`, which Slack parses): nothing live outside code, the same code verbatim. */
function checkNativeMode(markdown: string, input: CodeView): string {
  const safe = safeMarkdown(markdown, { mentionableUserIds: MENTIONABLE });
  expect(isSafeMarkdown(safe, { mentionableUserIds: MENTIONABLE })).toBe(true);
  const output = codeView(safe);
  const danger = dangerIn(safe, output);
  expect(danger.outside).toEqual([]);
  expect(danger.inCode).toBe(dangerIn(markdown, input).inCode);
  // The same code, verbatim: what update mode shows as code. Compared line by line: where one
  // indented block follows a fence that a nested quote closed lazily, the parser splits it in two
  // (CommonMark reads one), and the rewritten text parses as the one block; the lines are the same.
  const codeLines = (view: CodeView) => view.values.join('\n').split('\n');
  expect(codeLines(output)).toEqual(codeLines(input));
  return safe;
}

function checkBothModes(markdown: string): string {
  const input = codeView(markdown);
  checkUpdateMode(markdown, input);
  return checkNativeMode(markdown, input);
}

const streamBase = { logger: pino({ level: 'silent' }), channel: 'C1', threadTs: '1.1', recipientUserId: 'U1', recipientTeamId: 'T1', intervalMs: 0, mentionableUserIds: MENTIONABLE };

/** What native streaming shows of `answer` written a line at a time, all messages together. */
async function streamLineByLine(answer: string): Promise<string> {
  const { client, texts } = fakeStreamingSlack();
  const stream = createNativeAnswerStream({ ...streamBase, client });
  for (const line of answer.split(/(?<=\n)/)) {
    stream.append(line);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await stream.finish(answer);
  return [...texts.values()].join('');
}

/**
 * Streams `markdown` natively, appended in pieces cut at `cuts`: every state safe and within the
 * size limit; and either each message, read on its own, shows the code of the whole answer as code
 * and its text as text (the messages holding its whole safe rendering), or the stream gave up and
 * the answer was shown as safe mrkdwn edits. Whether it stayed native.
 */
async function checkNativeStreaming(markdown: string, cuts: number[], maxMessageLength: number): Promise<boolean> {
  const { client, logger, degraded, texts, closings, shown, edits } = fakeStreamingSlack();
  const maxLength = Math.max(maxMessageLength, 40);
  const stream = createNativeAnswerStream({ ...streamBase, client, logger, maxMessageLength: maxLength });
  const points = [...new Set(cuts.map((cut) => cut % (markdown.length + 1)))].sort((a, b) => a - b);
  let last = 0;
  for (const point of [...points, markdown.length]) {
    stream.append(markdown.slice(last, point));
    last = point;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await stream.finish(markdown);
  // Every state of every message Slack showed: nothing live outside code, nothing over the limit.
  for (const text of shown) {
    expect(dangerIn(text, codeView(text)).outside).toEqual([]);
    expect(isSafeMarkdown(text, { mentionableUserIds: MENTIONABLE })).toBe(true);
    expect(text.length).toBeLessThanOrEqual(maxLength);
  }
  // A stream that gave up (no clean cut before the limit, or the text so far came to read differently) carries on with safe mrkdwn edits.
  for (const text of edits) expect(text.match(DANGER)).toBeNull();
  if (degraded()) return false;
  const rendered = safeMarkdown(markdown, { mentionableUserIds: MENTIONABLE });
  expect(misreadMessages({ rendered, texts, closings })).toEqual([]);
  return true;
}

describe('what is code is the CommonMark parser’s call, in both answer modes', () => {
  it('the repro: a backtick fence with a backtick in its info string opens nothing, so what follows is defused', async () => {
    const answer = '```ok`\n<!channel> the deploy is done\nlog in at [bank.example/login](https://evil.example/steal)\n<http://evil.example|good.example>';
    const native = safeMarkdown(answer);
    expect(native).not.toContain('<!channel>');
    expect(native).not.toContain('[bank.example/login](');
    expect(native).toContain('bank.example/login (https://evil.example/steal)');
    expect(native).toContain('\\<http://evil.example|good.example>');
    const mrkdwn = markdownToMrkdwn(answer);
    expect(mrkdwn).not.toContain('```\n');
    expect(mrkdwn).toContain('@\u200Bchannel the deploy is done');
    expect(mrkdwn).toContain('bank.example/login (<https://evil.example/steal>)');

    // Streamed line by line, as the model writes it.
    expect(await streamLineByLine(answer)).toBe(native);
  });

  it('the repro in a list: a fence indented into a list item ends with the item', async () => {
    const answer = '- step one\n  ```\n  kubectl get pods <ns>\n<!here> all done\n[bank.example](https://evil.example)';
    const native = safeMarkdown(answer);
    expect(native).toContain('kubectl get pods <ns>');
    expect(native).toContain('@\u200Bhere all done');
    expect(native).toContain('bank.example (https://evil.example)');
    expect(await streamLineByLine(answer)).toBe(native);
    expect(renderAnswer(answer).join('\n')).toContain('@\u200Bhere all done');
  });

  it('takes nesting no reader needs (which could exhaust the stack) as plain text, safely, in both modes', () => {
    for (const markdown of [`${'> '.repeat(3000)}<!here> [bank.example](https://evil.example)`, `${'- '.repeat(3000)}\`<!channel>\``, `${'> - '.repeat(40)}\`\`\`\n<!here>`]) {
      const native = safeMarkdown(markdown);
      expect(isSafeMarkdown(native)).toBe(true);
      expect(dangerIn(native, codeView(native)).outside).toEqual([]);
      expect(native).not.toContain('[bank.example](');
      expect(markdownToMrkdwn(markdown)).not.toMatch(/<!|\|bank/);
    }
  });

  it('keeps a tag on a lazy line in its quote and list item, and the fence after it where it was (seed -353508803)', () => {
    // The parser takes `</span>`, on a lazy line after the item's paragraph, as an HTML block in the
    // list item in the quote; shown as text after a blank line, it and the ``` after it left both,
    // so the next ``` opened a fence in the quote that ran over the nested quote's lines.
    const markdown = '> - <!channel>\n>    ` <!channel> `\n   </span>\n>    ```\n> \n>   ```\n> >   ```\n> > ## ` <!channel> `\n> > ` <!channel> `\n- > ';
    const safe = checkBothModes(markdown);
    expect(safe).toContain('>\n>    \\</span>\n>    \\`\\`\\`\n>\n');
    for (const lazy of ['> a\n</span>\n> b', '- a\n</span>\n  b', '> > a\n> </span>\n> > b', '> - a\n</span>\n>   ```\n>   <!here>\n>   ```']) {
      expect(parseMarkdown(safeMarkdown(lazy)).children).toHaveLength(1);
      checkBothModes(lazy);
    }
  });

  it('defuses what is outside code and keeps code verbatim, the same code in both modes', () => {
    fc.assert(
      fc.property(markdownDocument, (markdown) => {
        checkBothModes(markdown);
      }),
      // Seed 540381172's find: a fence in a nested quote closed lazily, then an indented block.
      // A soak: `PROPERTY_RUNS=500 PROPERTY_SEED=… npx vitest run src/slack/answer/answer-modes.property.test.ts`.
      {
        numRuns: Number(process.env.PROPERTY_RUNS ?? 400),
        ...(process.env.PROPERTY_SEED === undefined ? {} : { seed: Number(process.env.PROPERTY_SEED) }),
        plugins: [boundedShrinking()],
        examples: [['> > ` <!channel> `\n> </span>\n> > ```\n>     <!channel>\n>     <!channel>\n> <!channel>\n> <!channel>\n- - ']],
      },
    );
    // Hundreds of parses take seconds alone and far longer beside a second suite on two cores.
  }, 120_000);

  it('does the same for the text so far, an unclosed fence at its end running to the end in both modes', () => {
    fc.assert(
      fc.property(markdownDocument, fc.nat(), (markdown, cut) => {
        const lineEnds = [...markdown.matchAll(/\n/g)].map((match) => match.index + 1);
        const wholeLines = markdown.slice(0, lineEnds.length === 0 ? 0 : lineEnds[cut % lineEnds.length]);
        checkBothModes(wholeLines);
        // Update mode renders any prefix, even mid-line.
        const prefix = markdown.slice(0, cut % (markdown.length + 1));
        checkUpdateMode(prefix, codeView(prefix));
      }),
      { numRuns: 300, plugins: [boundedShrinking()] },
    );
  }, 120_000);

  it('holds for what it found when a rollover patched text at any cut (seeds -1268312091, 847488056, -514368710)', async () => {
    // A fence's opening line cut in two, a quote's fence reopened after its `>`, a list item's fence
    // reopened with a longer one: none of them is a clean cut now.
    await checkNativeStreaming('``` <!channel> <!channel> <!channel> <!channel>', [], 40);
    await checkNativeStreaming('> > ```\n> > <https://evil.example|bank.example login>\n> > ```\n> > <div>', [], 40);
    await checkNativeStreaming('1. 1. ```\n     ```\n     ## <!channel>\n   ## <!channel>\n- ', [], 40);
  });

  it('holds where micromark reads a message otherwise than the answer after a clean cut', async () => {
    // After a cut before the indented block, `> 2. ```` read a list item (its fence code) in the answer, text in the
    // message, the block's next line: the parser carries what it read on a line over to the next (found by the property).
    await checkNativeStreaming('> ` <!channel> `\n> ` <!channel> `\n> > </span>\n> ```\n> > \n> > <!channel>\n    <!channel>\n> 2. ```\n```\n> > <!channel>\n- > <!channel>\n', [], 95);
    // micromark reads `10) …` right after an indented code block as a paragraph's text, at a message's start as a list item.
    await checkNativeStreaming(`    ${'log line '.repeat(12)}\n10) # not a heading <@U0IN>\n    \`\`\`\n**bold** <@U0IN>\n    \`\`\`\n`, [], 160);
  });

  it('streams natively only where each message reads on its own as in the whole answer, else shows it as edits', async () => {
    // How many answers stayed native over more than one message: a property that only ever saw
    // streams give up would prove nothing about clean cuts.
    let rolledOver = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(markdownDocument, longerDocument), fc.array(fc.nat(), { maxLength: 6 }), fc.integer({ min: 40, max: 400 }), async (markdown, cuts, maxMessageLength) => {
        const native = await checkNativeStreaming(markdown, cuts, maxMessageLength);
        if (native && markdown.length > Math.max(maxMessageLength, 40)) rolledOver += 1;
      }),
      {
        numRuns: Number(process.env.PROPERTY_RUNS ?? 80),
        ...(process.env.PROPERTY_SEED === undefined ? {} : { seed: Number(process.env.PROPERTY_SEED) }),
        plugins: [boundedShrinking()],
      },
    );
    if (process.env.PROPERTY_RUNS === undefined) expect(rolledOver).toBeGreaterThan(5);
  }, 120_000);
});
