import type { WebClient } from '@slack/web-api';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { codeNodes, endOf, parseMarkdown, startOf } from '../format/parse-markdown.js';
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

describe('native streaming: a rollover inside a code block of a list item', () => {
  it('keeps the text after the block as text, not code, in the message that shows it', async () => {
    const body = Array.from({ length: 20 }, (_, i) => `     echo step ${i}`).join('\n');
    // A fence in a nested list item: its lines are indented by the item's content (5 spaces), so the
    // closing fence `     ```` closes it there, but not a fence reopened at column 0.
    const answer = `Steps:\n\n- Install\n  - run this:\n     \`\`\`sh\n${body}\n     \`\`\`\n\nAfterwards **restart** the service and tell <@U0IN>.\n`;
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
      maxMessageLength: 200,
    });
    for (const line of answer.split(/(?<=\n)/)) {
      stream.append(line);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await stream.finish(answer);
    expect(edits).toEqual([]);
    const messages = [...texts.values()];
    expect(messages.length).toBeGreaterThan(1); // it did roll over
    // In the whole answer, "Afterwards …" is a paragraph (bold, a live mention of U0IN): so it must be in the message showing it.
    expect(isInCode(answer, answer.indexOf('Afterwards'))).toBe(false);
    const showing = messages.find((message) => message.includes('Afterwards'));
    expect(showing).toBeDefined();
    expect(isInCode(showing!, showing!.indexOf('Afterwards')), `message shown: ${JSON.stringify(showing)}`).toBe(false);
  });
});
