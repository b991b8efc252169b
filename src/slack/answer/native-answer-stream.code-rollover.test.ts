import type { WebClient } from '@slack/web-api';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { codeNodes, endOf, parseMarkdown, startOf } from '../format/parse-markdown.js';
import { safeMarkdown } from '../format/safe-markdown.js';
import { createNativeAnswerStream } from './native-answer-stream.js';

/** A fake Slack that keeps each streamed message's text as Slack would show it. */
function fakeStreamingClient() {
  const texts = new Map<string, string>();
  const edits: string[] = [];
  let next = 1;
  const client = {
    chat: {
      startStream: async (a: { markdown_text: string }) => {
        const ts = `2.${next++}`;
        texts.set(ts, a.markdown_text);
        return { ok: true, ts };
      },
      appendStream: async (a: { ts: string; markdown_text: string }) => {
        texts.set(a.ts, (texts.get(a.ts) ?? '') + a.markdown_text);
        return { ok: true };
      },
      stopStream: async (a: { ts: string; markdown_text?: string }) => {
        texts.set(a.ts, (texts.get(a.ts) ?? '') + (a.markdown_text ?? ''));
        return { ok: true };
      },
      update: async (a: { ts: string; text: string }) => {
        texts.set(a.ts, a.text);
        edits.push(a.text);
        return { ok: true };
      },
      postMessage: async (a: { text: string }) => {
        const ts = `3.${next++}`;
        texts.set(ts, a.text);
        edits.push(a.text);
        return { ok: true, ts };
      },
      delete: async () => ({ ok: true }),
    },
  };
  return { client: client as unknown as WebClient, texts, edits };
}

const isInCode = (message: string, at: number) => codeNodes(parseMarkdown(message)).some((node) => startOf(node) <= at && at < endOf(node));

/** Streams `answer` a line at a time, as the model writes it; the messages Slack shows and any fallback edits. */
async function streamLineByLine(answer: string, maxMessageLength?: number) {
  const { client, texts, edits } = fakeStreamingClient();
  const stream = createNativeAnswerStream({
    logger: pino({ level: 'silent' }),
    channel: 'C1',
    threadTs: '1.1',
    recipientUserId: 'U1',
    recipientTeamId: 'T1',
    intervalMs: 0,
    mentionableUserIds: ['U0IN'],
    client,
    ...(maxMessageLength === undefined ? {} : { maxMessageLength }),
  });
  for (const line of answer.split(/(?<=\n)/)) {
    stream.append(line);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await stream.finish(answer);
  return { messages: [...texts.values()], edits };
}

describe('native streaming: a rollover inside a code block of a list item or a quote', () => {
  it('keeps the text after the block as text, not code, in the message that shows it', async () => {
    const body = Array.from({ length: 20 }, (_, i) => `     echo step ${i}`).join('\n');
    // A fence in a nested list item: its lines are indented by the item's content (5 spaces), so the
    // closing fence `     ```` closes it there, but not a fence reopened at column 0.
    const answer = `Steps:\n\n- Install\n  - run this:\n     \`\`\`sh\n${body}\n     \`\`\`\n\nAfterwards **restart** the service and tell <@U0IN>.\n`;
    const { messages, edits } = await streamLineByLine(answer, 200);
    expect(edits).toEqual([]);
    expect(messages.length).toBeGreaterThan(1); // it did roll over
    // In the whole answer, "Afterwards …" is a paragraph (bold, a live mention of U0IN): so it must be in the message showing it.
    expect(isInCode(answer, answer.indexOf('Afterwards'))).toBe(false);
    const showing = messages.find((message) => message.includes('Afterwards'));
    expect(showing).toBeDefined();
    expect(isInCode(showing!, showing!.indexOf('Afterwards')), `message shown: ${JSON.stringify(showing)}`).toBe(false);
  });

  it('keeps the rest of a long code line in a quote as code in the next message (default message length)', async () => {
    // A quoted log line longer than half a message (1,950 characters): the rollover cuts it at a space.
    const longLine = Array.from({ length: 700 }, (_, i) => `k${i}=v`).join(' ');
    const answer = `The failing request:\n\n> \`\`\`\n> ${longLine} cc <@U0IN>\n> \`\`\`\n\nDone.\n`;
    const safe = safeMarkdown(answer, { mentionableUserIds: ['U0IN'] });
    // In the whole answer the mention is code: shown as written, it notifies no one.
    expect(isInCode(safe, safe.indexOf('<@U0IN>'))).toBe(true);
    const { messages, edits } = await streamLineByLine(answer);
    expect(edits).toEqual([]);
    expect(messages.length).toBeGreaterThan(1); // it did roll over
    const showing = messages.find((message) => message.includes('<@U0IN>'))!;
    expect(isInCode(showing, showing.indexOf('<@U0IN>')), `message shown: ${JSON.stringify(showing.slice(0, 80))}…`).toBe(true);
  });

  it('does not give up native streaming for a long code line in a quote holding an outsider mention', async () => {
    const longLine = Array.from({ length: 700 }, (_, i) => `k${i}=v`).join(' ');
    const answer = `The failing request:\n\n> \`\`\`\n> ${longLine} from <@U0OUT>\n> \`\`\`\n\nDone.\n`;
    const { messages, edits } = await streamLineByLine(answer);
    expect(messages.length).toBeGreaterThan(1);
    // Shown out of code, the mention would make a message unsafe on its own: the stream would fall back to mrkdwn edits.
    expect(edits).toEqual([]);
  });

  it('keeps the text after a list item’s unclosed code block as text when the rollover falls on the blank line after it', async () => {
    const body = Array.from({ length: 6 }, (_, i) => `  echo step ${i}`).join('\n');
    // The model did not close the fence; the list item (and the block) ends at the paragraph after the blank line.
    const answer = `- Run:\n  \`\`\`sh\n${body}\n\nAfterwards **restart** the service and tell <@U0IN>.\n`;
    const safe = safeMarkdown(answer, { mentionableUserIds: ['U0IN'] });
    expect(isInCode(safe, safe.indexOf('Afterwards'))).toBe(false);
    const { messages, edits } = await streamLineByLine(answer, 120);
    expect(edits).toEqual([]);
    expect(messages.length).toBeGreaterThan(1);
    const showing = messages.find((message) => message.includes('Afterwards'))!;
    expect(isInCode(showing, showing.indexOf('Afterwards')), `message shown: ${JSON.stringify(showing)}`).toBe(false);
  });

  it('keeps code lines less indented than their fence (in a list item) as code in the next message', async () => {
    // The fence is indented 2 past the item's content column; its lines are not (up to 4 spaces are stripped).
    const body = Array.from({ length: 8 }, (_, i) => `  run **step** ${i} <@U0IN>`).join('\n');
    const answer = `- Run:\n\n    \`\`\`\n${body}\n    \`\`\`\n`;
    const safe = safeMarkdown(answer, { mentionableUserIds: ['U0IN'] });
    for (let at = safe.indexOf('run'); at !== -1; at = safe.indexOf('run', at + 1)) expect(isInCode(safe, at)).toBe(true);
    const { messages, edits } = await streamLineByLine(answer, 200);
    expect(edits).toEqual([]);
    expect(messages.length).toBeGreaterThan(1);
    for (const message of messages)
      for (let at = message.indexOf('run'); at !== -1; at = message.indexOf('run', at + 1))
        expect(isInCode(message, at), `message shown: ${JSON.stringify(message)}`).toBe(true);
  });
});

describe('native streaming: a rollover inside a fence indented 4 past its list item’s content column', () => {
  it.each([
    ['- Run:', '  '],
    ['1. Install:', '   '],
  ])('keeps a later top-level code block in the next message code (%s)', async (item, indent) => {
    const body = Array.from({ length: 16 }, (_, i) => `${indent}run step ${i}`).join('\n');
    // The later block has no info string (an output, a log): a fence like the one reopened would close it.
    const answer = `${item}\n\n    \`\`\`bash\n${body}\n    \`\`\`\n\nExpected output:\n\n\`\`\`\nping <@U0IN> **now**\n\`\`\`\n`;
    const safe = safeMarkdown(answer, { mentionableUserIds: ['U0IN'] });
    expect(isInCode(safe, safe.indexOf('<@U0IN>'))).toBe(true);
    const { messages, edits } = await streamLineByLine(answer, 200);
    expect(edits).toEqual([]);
    expect(messages.length).toBeGreaterThan(1);
    const showing = messages.find((message) => message.includes('<@U0IN>'))!;
    expect(isInCode(showing, showing.indexOf('<@U0IN>')), `message shown: ${JSON.stringify(showing)}`).toBe(true);
  });

  it('keeps a later code block code when its fence is longer than any the answer had at the rollover', async () => {
    const body = Array.from({ length: 40 }, (_, i) => `  run step ${i}`).join('\n');
    // The block spans several messages; the later one opens with more backticks than the reopened fence.
    const answer = `- Run:\n\n    \`\`\`\n${body}\n    \`\`\`\n\nExpected output:\n\n\`\`\`\`\`\`\`\`\nping <@U0IN> **now**\n\`\`\`\`\`\`\`\`\n`;
    const { messages, edits } = await streamLineByLine(answer, 200);
    expect(edits).toEqual([]);
    expect(messages.length).toBeGreaterThan(2);
    for (const message of messages)
      for (const word of ['run step', '<@U0IN>'])
        for (let at = message.indexOf(word); at !== -1; at = message.indexOf(word, at + 1))
          expect(isInCode(message, at), `message shown: ${JSON.stringify(message)}`).toBe(true);
  });

  it('does not give up native streaming for an outsider mention in a later code block', async () => {
    const body = Array.from({ length: 16 }, (_, i) => `  run step ${i}`).join('\n');
    const answer = `- Run:\n\n    \`\`\`\n${body}\n    \`\`\`\n\nThen:\n\n\`\`\`\nlog line from <@U0OUT>\n\`\`\`\n`;
    const { messages, edits } = await streamLineByLine(answer, 200);
    expect(messages.length).toBeGreaterThan(1);
    expect(edits).toEqual([]);
  });
});

describe('native streaming: a rollover inside an indented code block', () => {
  const longLine = Array.from({ length: 700 }, (_, i) => `k${i}=v`).join(' ');

  it.each([
    ['at the top level', ''],
    ['in a quote', '> '],
    ['in a list item', '  '],
  ])('keeps the rest of a long line cut in two code (%s)', async (_where, container) => {
    const lead = container === '  ' ? '- The failing request:' : `${container}The failing request:`;
    const answer = `${lead}\n${container.trimEnd()}\n${container}    ${longLine} cc <@U0IN> **x**\n\nDone.\n`;
    const safe = safeMarkdown(answer, { mentionableUserIds: ['U0IN'] });
    expect(isInCode(safe, safe.indexOf('<@U0IN>'))).toBe(true);
    const { messages, edits } = await streamLineByLine(answer);
    expect(edits).toEqual([]);
    expect(messages.length).toBeGreaterThan(1);
    const showing = messages.find((message) => message.includes('<@U0IN>'))!;
    expect(isInCode(showing, showing.indexOf('<@U0IN>')), `message shown: ${JSON.stringify(showing.slice(0, 80))}…`).toBe(true);
  });

  it('does not give up native streaming for an outsider mention in the rest of a long line', async () => {
    const answer = `The failing request:\n\n    ${longLine} from <@U0OUT>\n\nDone.\n`;
    const { messages, edits } = await streamLineByLine(answer);
    expect(messages.length).toBeGreaterThan(1);
    expect(edits).toEqual([]);
  });
});

describe('native streaming: a long paragraph line cut by a rollover', () => {
  const filler = (n: number) => Array.from({ length: n }, (_, i) => `w${i % 10}`).join(' ');

  it('is not cut inside a code span: an allowed mention in it stays code', async () => {
    // a paragraph of ~1,000 characters, then one line of ~3,000 whose code span straddles the cut at half a message
    const answer = `${filler(330)}\n\n${filler(500)} see \`grep ${filler(200)} and tell <@U0IN>\` ${filler(330)}\n`;
    const safe = safeMarkdown(answer, { mentionableUserIds: ['U0IN'] });
    expect(isInCode(safe, safe.indexOf('<@U0IN>'))).toBe(true);
    const { messages, edits } = await streamLineByLine(answer);
    expect(edits).toEqual([]);
    expect(messages.length).toBeGreaterThan(1);
    const showing = messages.find((message) => message.includes('<@U0IN>'))!;
    expect(isInCode(showing, showing.indexOf('<@U0IN>')), `message shown: ${JSON.stringify(showing.slice(0, 120))}…`).toBe(true);
  });

  it('does not give up native streaming for an outsider mention in a code span of a long line', async () => {
    const answer = `Intro\n\n${filler(500)} see \`grep <@U0OUT> ${filler(200)} in the log\` ${filler(300)}\n`;
    const { edits } = await streamLineByLine(answer);
    expect(edits).toEqual([]);
  });
});
