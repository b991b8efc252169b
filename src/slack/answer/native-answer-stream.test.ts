import type { WebClient } from '@slack/web-api';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { unconfirmedWriteError } from '../unrepeated-slack-writes.js';
import { createNativeAnswerStream } from './native-answer-stream.js';

/**
 * Slack's stream methods as the thread would show them: one growing text per message. The `loseStart`th
 * `chat.startStream` is applied but its reply lost, as the Web API client reports it (`unconfirmedWriteError`).
 */
function fakeStreamingClient(options: { failAppendAfter?: number; loseStart?: number } = {}) {
  const texts = new Map<string, string>();
  const updates: Array<{ ts: string; text: string }> = [];
  let appends = 0;
  let starts = 0;
  let next = 1;
  const client = {
    chat: {
      startStream: async (args: { markdown_text: string }) => {
        const ts = slackTs(next++);
        texts.set(ts, args.markdown_text);
        starts += 1;
        if (starts === options.loseStart) throw Object.assign(new Error('An HTTP protocol error occurred'), { original: unconfirmedWriteError({ method: 'chat.startStream', cause: new Error('HTTP 502') }) });
        return { ok: true, ts };
      },
      appendStream: async (args: { ts: string; markdown_text: string }) => {
        appends += 1;
        if (options.failAppendAfter !== undefined && appends > options.failAppendAfter) throw Object.assign(new Error('An API error occurred: message_not_in_streaming_state'), { data: { error: 'message_not_in_streaming_state' } });
        texts.set(args.ts, (texts.get(args.ts) ?? '') + args.markdown_text);
        return { ok: true };
      },
      stopStream: async (args: { ts: string; markdown_text?: string }) => {
        texts.set(args.ts, (texts.get(args.ts) ?? '') + (args.markdown_text ?? ''));
        return { ok: true };
      },
      update: async (args: { ts: string; text: string }) => {
        updates.push({ ts: args.ts, text: args.text });
        texts.set(args.ts, args.text);
        return { ok: true };
      },
      postMessage: async (args: { text: string }) => {
        const ts = slackTs(next++);
        texts.set(ts, args.text);
        return { ok: true, ts };
      },
      delete: async () => ({ ok: true }),
    },
    conversations: {
      replies: async () => ({ ok: true, messages: [...texts].map(([ts, text]) => ({ ts, text, bot_id: 'B1' })), has_more: false }),
    },
  };
  return { client: client as unknown as WebClient, texts, updates };
}

/** A message timestamp as Slack makes them: the time, and a sequence that keeps them unique. */
const slackTs = (sequence: number) => `${Math.floor(Date.now() / 1000)}.${String(sequence).padStart(6, '0')}`;

const base = { logger: pino({ level: 'silent' }), channel: 'C1', threadTs: '1.1', recipientUserId: 'U1', recipientTeamId: 'T1', intervalMs: 0 };

describe('createNativeAnswerStream', () => {
  it('closes a code block at a rollover and reopens it in the next message', async () => {
    const { client, texts } = fakeStreamingClient();
    const stream = createNativeAnswerStream({ ...base, client, maxMessageLength: 120 });
    const answer = ['Logs:', '```', ...Array.from({ length: 12 }, (_, index) => `line ${index} <x> & y`), '```', 'Done.'].join('\n');
    stream.append(answer);
    await stream.finish(answer);
    const messages = [...texts.values()];
    expect(messages.length).toBeGreaterThan(1);
    for (const text of messages) {
      expect(text.length).toBeLessThanOrEqual(120);
      expect((text.match(/```/g) ?? []).length % 2).toBe(0);
    }
    // Code stays verbatim: `<` is escaped only outside code.
    expect(messages.join('')).toContain('line 11 <x> & y');
  });

  it('notifies only the people it may mention; anyone else it names is text, in the stream and after a fallback', async () => {
    const answer = 'Thanks <@U0ALICE>, and <@U0ALICE|alice>.\nI asked <@U0MALLORY|mallory> and <@W0EVE>.\n';
    const { client, texts } = fakeStreamingClient();
    const stream = createNativeAnswerStream({ ...base, client, mentionableUserIds: ['U0ALICE'] });
    stream.append(answer);
    await stream.finish(answer);
    expect([...texts.values()].join('')).toBe('Thanks <@U0ALICE>, and <@U0ALICE>.\nI asked @\u200Bmallory and @\u200BW0EVE.\n');

    const failing = fakeStreamingClient({ failAppendAfter: 0 });
    const degraded = createNativeAnswerStream({ ...base, client: failing.client, mentionableUserIds: new Set(['U0ALICE']) });
    degraded.append('First line.\n');
    // Streamed first; the next append fails, and the answer carries on as message edits.
    await vi.waitFor(() => expect(failing.texts.size).toBe(1));
    degraded.append(answer);
    await degraded.finish(`First line.\n${answer}`);
    expect(failing.updates.at(-1)?.text).toBe('First line.\nThanks <@U0ALICE>, and <@U0ALICE>.\nI asked @\u200Bmallory and @\u200BW0EVE.');
  });

  it('carries on with message edits of the same messages when Slack stops accepting the stream', async () => {
    const { client, texts, updates } = fakeStreamingClient({ failAppendAfter: 0 });
    const stream = createNativeAnswerStream({ ...base, client });
    stream.append('First line.\n');
    await new Promise((resolve) => setTimeout(resolve, 20));
    stream.append('Second line.\n');
    await new Promise((resolve) => setTimeout(resolve, 20));
    await stream.finish('First line.\nSecond line.\nThird line.');
    expect(updates.at(-1)?.text).toBe('First line.\nSecond line.\nThird line.');
    expect(stream.messageTs()).toEqual([...texts.keys()]);
  });
});

describe('createNativeAnswerStream, when the reply to chat.startStream is lost', () => {
  it('finds the stream Slack started all the same and streams on in it, with no second copy', async () => {
    const { client, texts, updates } = fakeStreamingClient({ loseStart: 1 });
    const stream = createNativeAnswerStream({ ...base, client });
    stream.append('Status of the rollout:\n');
    await new Promise((resolve) => setTimeout(resolve, 20));
    stream.append('- api: healthy\n');
    await stream.finish('Status of the rollout:\n- api: healthy\nNothing else.');
    expect([...texts.values()]).toEqual(['Status of the rollout:\n- api: healthy\nNothing else.']);
    expect(updates).toEqual([]);
    expect(stream.messageTs()).toEqual([...texts.keys()]);
  });

  it('does the same for the stream that continues a long answer in a new message', async () => {
    const { client, texts, updates } = fakeStreamingClient({ loseStart: 2 });
    const stream = createNativeAnswerStream({ ...base, client, maxMessageLength: 120 });
    // A list: a new message starts only between its items (one paragraph longer than a message would be shown as edits).
    const answer = Array.from({ length: 12 }, (_, index) => `- line ${index} of the rollout log`).join('\n');
    stream.append(answer);
    await stream.finish(answer);
    expect(texts.size).toBeGreaterThan(1);
    expect([...texts.values()].join('')).toBe(answer);
    expect(updates).toEqual([]);
    expect(stream.messageTs()).toEqual([...texts.keys()]);
  });
});
