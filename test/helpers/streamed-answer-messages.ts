import type { WebClient } from '@slack/web-api';
import pino from 'pino';
import { expect } from 'vitest';
import { createNativeAnswerStream } from '../../src/slack/answer/native-answer-stream.js';
import { renderAnswer } from '../../src/slack/answer/render-answer.js';
import { codeNodes, endOf, parseMarkdown, startOf } from '../../src/slack/format/parse-markdown.js';
import { safeMarkdown } from '../../src/slack/format/safe-markdown.js';

/**
 * Slack's stream and message methods as a thread shows them: each message's text (in the order
 * posted, deleted ones gone), the text each stream was stopped with (a rollover's closing fence),
 * every state a message was shown in, and the mrkdwn texts of the edits an answer fell back to;
 * and a logger that tells whether the answer gave up native streaming (an answer can fall back
 * to edits and show nothing, when its mrkdwn is blank).
 */
export function fakeStreamingSlack() {
  const texts = new Map<string, string>();
  const closings = new Map<string, string>();
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
      delete: async (args: { ts: string }) => {
        texts.delete(args.ts);
        return { ok: true };
      },
    },
  };
  const events: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void events.push(String(JSON.parse(line).event)) });
  const degraded = () => events.includes('native-stream-failed');
  return { client: client as unknown as WebClient, logger, degraded, texts, closings, shown, edits };
}

/** The users an answer streamed by `streamAnswer` may mention (`<@U0IN>` pings; any other is shown as text). */
export const MENTIONABLE_USER_IDS = ['U0IN'];

/** Streams `answer` in `deltas` (by default a line at a time, as the model writes it); what Slack shows. */
export async function streamAnswer(answer: string, { maxMessageLength, deltas }: { maxMessageLength?: number; deltas?: string[] } = {}) {
  const slack = fakeStreamingSlack();
  const stream = createNativeAnswerStream({
    logger: slack.logger,
    channel: 'C1',
    threadTs: '1.1',
    recipientUserId: 'U1',
    recipientTeamId: 'T1',
    intervalMs: 0,
    mentionableUserIds: MENTIONABLE_USER_IDS,
    client: slack.client,
    ...(maxMessageLength === undefined ? {} : { maxMessageLength }),
  });
  for (const delta of deltas ?? answer.split(/(?<=\n)/)) {
    stream.append(delta);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await stream.finish(answer);
  return { ...slack, messages: [...slack.texts.values()], degraded: slack.degraded() };
}

/** An ordered list item's line up to its number's delimiter. */
const ORDERED_MARKER = /^ {0,3}\d{1,9}([.)])/;

/** Offsets of `markdown` the parser reads as code (a code block or span, its fences and backticks included). */
export function codeOffsets(markdown: string): (offset: number) => boolean {
  const nodes = codeNodes(parseMarkdown(markdown));
  return (offset) => nodes.some((node) => startOf(node) <= offset && offset < endOf(node));
}

/**
 * Where a streamed answer's `rendered` text stands in its messages, each message read on its own:
 * every character (but whitespace) that one of them shows as code, or as text, where the whole
 * answer shows it otherwise; and whether the messages, less a rollover's closing fence and the
 * reopening line after it (the block's own opening line), hold `rendered` (but for whitespace at
 * its end, never sent), but for a message that starts with an ordered list item's number in the
 * whole answer in place of the one written (that number is the caller's to check). Empty when every
 * message reads as the whole answer does.
 */
export function misreadMessages({ rendered, texts, closings }: { rendered: string; texts: ReadonlyMap<string, string>; closings: ReadonlyMap<string, string> }): string[] {
  const wholeCode = codeOffsets(rendered);
  const misread: string[] = [];
  let answerAt = 0;
  let closed = '';
  for (const [ts, text] of texts) {
    const closing = closings.get(ts) ?? '';
    let bodyAt = closed === '' ? 0 : text.indexOf('\n') + 1;
    if (closed !== '' && !/^ {0,3}(?:`{3,}|~{3,})/.test(text)) misread.push(`message ${ts} does not reopen the block closed with ${closed}: ${JSON.stringify(text.slice(0, 60))}`);
    // An ordered list item renumbered: the marker shown and the one written, each with its own delimiter.
    const shownMarker = closed === '' ? ORDERED_MARKER.exec(text) : null;
    const writtenMarker = ORDERED_MARKER.exec(rendered.slice(answerAt, answerAt + 16));
    if (shownMarker && writtenMarker && shownMarker[0] !== writtenMarker[0] && shownMarker[1] === writtenMarker[1]) {
      bodyAt = shownMarker[0].length;
      answerAt += writtenMarker[0].length;
    }
    const body = text.slice(bodyAt, text.length - closing.length);
    if (!rendered.startsWith(body, answerAt)) {
      misread.push(`message ${ts} is not the answer's text at ${answerAt}: ${JSON.stringify(body.slice(0, 60))} for ${JSON.stringify(rendered.slice(answerAt, answerAt + 60))}`);
      return misread;
    }
    const messageCode = codeOffsets(text);
    for (let at = 0; at < body.length; at++) {
      if (/\s/.test(body[at]!) || messageCode(bodyAt + at) === wholeCode(answerAt + at)) continue;
      const shownAs = messageCode(bodyAt + at) ? 'code' : 'text';
      misread.push(`message ${ts} shows ${shownAs} at ${JSON.stringify(body.slice(Math.max(0, at - 20), at + 20))} (answer offset ${answerAt + at})`);
      break;
    }
    answerAt += body.length;
    closed = closing;
  }
  if (rendered.slice(answerAt).trim() !== '') misread.push(`the messages end at ${answerAt} of ${rendered.length}: ${JSON.stringify(rendered.slice(answerAt, answerAt + 60))} not shown`);
  return misread;
}

/**
 * What the reader sees is right: streamed natively, each message read on its own shows the code of
 * the whole answer as code and its text as text, none over the size limit; or the stream gave up and
 * the messages, edited, show the answer as the edits render it (mrkdwn, split safely).
 */
export function expectShownRight(answer: string, shown: Awaited<ReturnType<typeof streamAnswer>>, maxMessageLength = 3900): void {
  if (shown.degraded) {
    expect(shown.messages).toEqual(renderAnswer(answer, { mentionableUserIds: MENTIONABLE_USER_IDS }));
    return;
  }
  const rendered = safeMarkdown(answer, { mentionableUserIds: MENTIONABLE_USER_IDS });
  expect(misreadMessages({ rendered, texts: shown.texts, closings: shown.closings })).toEqual([]);
  for (const message of shown.messages) expect(message.length).toBeLessThanOrEqual(maxMessageLength);
}
