import type { WebClient } from '@slack/web-api';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createUpdatingAnswerStream } from './updating-answer-stream.js';

interface Call {
  method: string;
  ts?: string;
  text?: string;
  at: number;
}

/** Just the chat methods the stream uses, recording what the thread would show and when. */
function fakeClient(options: { failUpdates?: number } = {}) {
  const calls: Call[] = [];
  let failUpdates = options.failUpdates ?? 0;
  let next = 100;
  const client = {
    chat: {
      postMessage: async (args: { text: string }) => {
        const ts = `1.${next++}`;
        calls.push({ method: 'postMessage', ts, text: args.text, at: Date.now() });
        return { ok: true, ts };
      },
      update: async (args: { ts: string; text: string }) => {
        if (failUpdates > 0) {
          failUpdates -= 1;
          throw new Error('ratelimited');
        }
        calls.push({ method: 'update', ts: args.ts, text: args.text, at: Date.now() });
        return { ok: true };
      },
      delete: async (args: { ts: string }) => {
        calls.push({ method: 'delete', ts: args.ts, at: Date.now() });
        return { ok: true };
      },
    },
  };
  return { client: client as unknown as WebClient, calls };
}

const logger = pino({ level: 'silent' });

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('createUpdatingAnswerStream', () => {
  it('posts at once, then edits at most once per interval with everything written so far', async () => {
    const { client, calls } = fakeClient();
    const stream = createUpdatingAnswerStream({ client, logger, channel: 'C1', threadTs: '1.1' });
    stream.append('Checking');
    await vi.advanceTimersByTimeAsync(0);
    for (const word of [' the', ' worker', ' now', '.']) {
      stream.append(word);
      await vi.advanceTimersByTimeAsync(200);
    }
    await vi.advanceTimersByTimeAsync(1000);
    await stream.finish('Checking the worker now. It is healthy.');
    expect(calls.map((call) => [call.method, call.text])).toEqual([
      ['postMessage', 'Checking'],
      ['update', 'Checking the worker now.'],
      ['update', 'Checking the worker now. It is healthy.'],
    ]);
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(1000);
    expect(stream.messageTs()).toEqual(['1.100']);
  });

  it('spills into a new message before the size limit and reports every message it takes', async () => {
    const { client, calls } = fakeClient();
    const reported: string[][] = [];
    const stream = createUpdatingAnswerStream({ client, logger, channel: 'C1', threadTs: '1.1', onMessages: (ts) => reported.push([...ts]) });
    const paragraph = `${'word '.repeat(300).trim()}.`;
    const answer = [paragraph, paragraph, paragraph, paragraph].join('\n\n');
    stream.append(answer.slice(0, 2000));
    await vi.advanceTimersByTimeAsync(1000);
    stream.append(answer.slice(2000));
    await vi.advanceTimersByTimeAsync(1000);
    await stream.finish(answer);
    for (const call of calls) expect(call.text?.length ?? 0).toBeLessThanOrEqual(3900);
    expect(stream.messageTs()).toHaveLength(2);
    expect(reported.at(-1)).toEqual(stream.messageTs());
  });

  it('rewrites messages left by an earlier attempt and deletes the ones the answer no longer needs', async () => {
    const { client, calls } = fakeClient();
    const stream = createUpdatingAnswerStream({ client, logger, channel: 'C1', threadTs: '1.1', replacing: ['9.1', '9.2'] });
    stream.append('Short answer.');
    await stream.finish('Short answer.');
    expect(calls.map((call) => [call.method, call.ts])).toEqual([
      ['update', '9.1'],
      ['delete', '9.2'],
    ]);
  });

  it('notifies only the people it may mention; anyone else it names is text that notifies no one', async () => {
    const { client, calls } = fakeClient();
    const stream = createUpdatingAnswerStream({ client, logger, channel: 'C1', threadTs: '1.1', mentionableUserIds: ['U0ALICE'] });
    const answer = 'Thanks <@U0ALICE|alice>. I asked <@U0MALLORY|mallory>, <@U0MALLORY> and <@W0EVE>.';
    stream.append(answer);
    await stream.finish(answer);
    expect(calls.at(-1)?.text).toBe('Thanks <@U0ALICE>. I asked @\u200Bmallory, @\u200BU0MALLORY and @\u200BW0EVE.');
    // By default nobody is notified.
    const quiet = fakeClient();
    await createUpdatingAnswerStream({ client: quiet.client, logger, channel: 'C1', threadTs: '1.1' }).finish(answer);
    expect(quiet.calls.at(-1)?.text).not.toContain('<@');
  });

  it('survives a failed edit: the next edit catches up and the final answer is shown', async () => {
    const { client, calls } = fakeClient({ failUpdates: 1 });
    const stream = createUpdatingAnswerStream({ client, logger, channel: 'C1', threadTs: '1.1' });
    stream.append('one');
    await vi.advanceTimersByTimeAsync(0);
    stream.append(' two');
    await vi.advanceTimersByTimeAsync(1000);
    stream.append(' three');
    await vi.advanceTimersByTimeAsync(1000);
    await stream.finish('one two three');
    expect(calls.at(-1)).toMatchObject({ method: 'update', text: 'one two three' });
  });
});
