import type { WebClient } from '@slack/web-api';
import fc from 'fast-check';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { boundedShrinking } from '../../../test/helpers/bounded-shrinking.js';
import { markdownToMrkdwn } from '../format/markdown-to-mrkdwn.js';
import { codeNodes, endOf, indentedCodeAt, parseMarkdown, startOf } from '../format/parse-markdown.js';
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
  fc.tuple(fc.constantFrom('- ', '1. ', '* '), fc.array(content, { minLength: 1, maxLength: 3 }), fc.constantFrom('', ' ', '  ', '   ', '    ', '\t')).map(([marker, blocks, indent]) => {
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

/** Slack's stream methods as the thread shows them: one growing text per message. */
function fakeStreamingClient() {
  const texts = new Map<string, string>();
  /** The text each stream was stopped with: the fence a rollover closes a code block with. */
  const closings = new Map<string, string>();
  /** Every state of a streamed message, and every mrkdwn text of the message edits it fell back to. */
  const shown: string[] = [];
  const edits: string[] = [];
  let next = 1;
  const record = (ts: string, text: string) => {
    texts.set(ts, text);
    shown.push(text);
  };
  const client = {
    chat: {
      startStream: async (args: { markdown_text: string }) => {
        const ts = `2.${next++}`;
        record(ts, args.markdown_text);
        return { ok: true, ts };
      },
      appendStream: async (args: { ts: string; markdown_text: string }) => {
        record(args.ts, (texts.get(args.ts) ?? '') + args.markdown_text);
        return { ok: true };
      },
      stopStream: async (args: { ts: string; markdown_text?: string }) => {
        closings.set(args.ts, args.markdown_text ?? '');
        record(args.ts, (texts.get(args.ts) ?? '') + (args.markdown_text ?? ''));
        return { ok: true };
      },
      update: async (args: { ts: string; text: string }) => {
        texts.set(args.ts, args.text);
        edits.push(args.text);
        return { ok: true };
      },
      postMessage: async (args: { text: string }) => {
        const ts = `3.${next++}`;
        texts.set(ts, args.text);
        edits.push(args.text);
        return { ok: true, ts };
      },
      delete: async () => ({ ok: true }),
    },
  };
  return { client: client as unknown as WebClient, texts, closings, shown, edits };
}

/**
 * The text the messages carry, all together: each without the fence a rollover closed it with (told
 * to `stopStream`, after a line break when the cut was mid-line), and the next without the fence
 * reopening the block (after its container prefix: `>`, indentation), then a space (the rest of its
 * opening line follows) or a line break, after which the rest of a code line cut in two has the
 * prefix again. The reopening fence is the closing one, or (a block whose own closing fence would
 * not close it there) a longer one, which the next rollover closes that message with, whatever block
 * it reopens. A line of an indented code block of `rendered` cut in two goes on after its
 * indentation (and its `>`) again.
 */
function unrolled(texts: Map<string, string>, closings: Map<string, string>, rendered: string): string {
  let carried = '';
  let closed = '';
  for (const [ts, text] of texts) {
    const closing = closings.get(ts) ?? '';
    let body = text.slice(0, text.length - closing.length);
    const indented = closed === '' && carried !== '' && !carried.endsWith('\n') ? indentedCodeAt(rendered, carried.length) : undefined;
    if (indented !== undefined) {
      expect(body.startsWith(indented.prefix), `message ${JSON.stringify(body)} after a cut in an indented code line`).toBe(true);
      body = body.slice(indented.prefix.length);
    }
    if (closed !== '') {
      const midLine = closed.startsWith('\n');
      const [reopened = '', prefix = ''] = /^([ >]*)(?:`{3,}|~{3,})/.exec(body) ?? [];
      expect(reopened, `message ${JSON.stringify(body)} after a rollover closed with ${JSON.stringify(closed)}`).not.toBe('');
      const opening = body.startsWith(`${reopened} `) ? `${reopened} ` : `${reopened}\n${midLine ? prefix : ''}`;
      expect(body.startsWith(opening), `message ${JSON.stringify(body)} after a rollover closed with ${JSON.stringify(closed)}`).toBe(true);
      body = body.slice(opening.length);
    }
    carried += body;
    closed = closing;
  }
  return carried;
}

const streamBase = { logger: pino({ level: 'silent' }), channel: 'C1', threadTs: '1.1', recipientUserId: 'U1', recipientTeamId: 'T1', intervalMs: 0, mentionableUserIds: MENTIONABLE };

/** What native streaming shows of `answer` written a line at a time, all messages together. */
async function streamLineByLine(answer: string): Promise<string> {
  const { client, texts } = fakeStreamingClient();
  const stream = createNativeAnswerStream({ ...streamBase, client });
  for (const line of answer.split(/(?<=\n)/)) {
    stream.append(line);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await stream.finish(answer);
  return [...texts.values()].join('');
}

/** Streams `markdown` natively, appended in pieces cut at `cuts`: every state safe, and the whole safe rendering shown. */
async function checkNativeStreaming(markdown: string, cuts: number[], maxMessageLength: number): Promise<void> {
  const { client, texts, closings, shown, edits } = fakeStreamingClient();
  const stream = createNativeAnswerStream({ ...streamBase, client, maxMessageLength: Math.max(maxMessageLength, 40) });
  const points = [...new Set(cuts.map((cut) => cut % (markdown.length + 1)))].sort((a, b) => a - b);
  let last = 0;
  for (const point of [...points, markdown.length]) {
    stream.append(markdown.slice(last, point));
    last = point;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await stream.finish(markdown);
  // Every state of every message Slack showed: nothing live outside code.
  for (const text of shown) {
    expect(dangerIn(text, codeView(text)).outside).toEqual([]);
    expect(isSafeMarkdown(text, { mentionableUserIds: MENTIONABLE })).toBe(true);
  }
  // A stream that gave up (the text so far came to read differently) carries on with safe mrkdwn edits.
  for (const text of edits) expect(text.match(DANGER)).toBeNull();
  // Otherwise the messages hold the safe rendering of the whole answer (but for whitespace at its end, never sent).
  const rendered = safeMarkdown(markdown, { mentionableUserIds: MENTIONABLE });
  if (edits.length === 0) expect(unrolled(texts, closings, rendered).trimEnd()).toBe(rendered.trimEnd());
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

  it('carries a fence whose opening line a new message cuts over as a reopened fence, its info string kept (seed -1268312091)', async () => {
    // The rollover cut the opening line after its third ping; the rest of the info string started the
    // next message as text, live there, so the stream gave up and the answer fell back to edits.
    await checkNativeStreaming('``` <!channel> <!channel> <!channel> <!channel>', [], 40);
  });

  it('takes a rollover fence in a quote, after its `>` markers, for the rollover’s (seed 847488056)', async () => {
    // The rollover fences stand in the quote; the messages hold the safe rendering with those `>` added.
    await checkNativeStreaming('> > ```\n> > <https://evil.example|bank.example login>\n> > ```\n> > <div>', [], 40);
  });

  it('takes a longer fence reopening a block whose own closing fence would not close it, for the rollover’s (seed -514368710)', async () => {
    // The second fence, 5 in (2 past its item's content column), reopens at 3 with a fence no later one closes.
    await checkNativeStreaming('1. 1. ```\n     ```\n     ## <!channel>\n   ## <!channel>\n- ', [], 40);
  });

  it('streams natively what safeMarkdown makes of the whole answer, and each message is safe read on its own', async () => {
    await fc.assert(
      fc.asyncProperty(markdownDocument, fc.array(fc.nat(), { maxLength: 6 }), fc.integer({ min: 40, max: 400 }), async (markdown, cuts, maxMessageLength) => {
        await checkNativeStreaming(markdown, cuts, maxMessageLength);
      }),
      { numRuns: 60, plugins: [boundedShrinking()] },
    );
  }, 120_000);
});
