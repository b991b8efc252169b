import type { WebClient } from '@slack/web-api';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { unconfirmedWriteError } from '../unrepeated-slack-writes.js';
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

/**
 * A thread whose posts Slack applies (or not) but whose reply is lost for the ones `lose` picks, as the
 * Web API client reports them (`unconfirmedWriteError`), and whose replies can be read.
 */
function lostReplyClient(options: { lose: (text: string, post: number) => 'applied' | 'not-applied' | undefined; failReads?: number }) {
  const thread: Array<{ ts: string; text: string; bot_id?: string }> = [];
  const posted: string[] = [];
  let failReads = options.failReads ?? 0;
  let reads = 0;
  let next = 100;
  const micro = (ts: string) => Number(ts.replace('.', ''));
  const client = {
    chat: {
      postMessage: async (args: { text: string }) => {
        posted.push(args.text);
        const lost = options.lose(args.text, posted.length);
        const ts = `${Math.floor(Date.now() / 1000)}.${String(next++).padStart(6, '0')}`;
        if (lost !== 'not-applied') thread.push({ ts, text: args.text, bot_id: 'B1' });
        if (lost) throw Object.assign(new Error('An HTTP protocol error occurred'), { original: unconfirmedWriteError({ method: 'chat.postMessage', cause: new Error('HTTP 502') }) });
        return { ok: true, ts };
      },
      update: async (args: { ts: string; text: string }) => {
        const message = thread.find((each) => each.ts === args.ts);
        if (message) message.text = args.text;
        return { ok: true };
      },
      delete: async (args: { ts: string }) => {
        thread.splice(thread.findIndex((each) => each.ts === args.ts), 1);
        return { ok: true };
      },
    },
    conversations: {
      replies: async (args: { oldest?: string }) => {
        reads += 1;
        if (failReads > 0) {
          failReads -= 1;
          throw new Error('conversations.replies failed');
        }
        return { ok: true, messages: thread.filter((message) => args.oldest === undefined || micro(message.ts) > micro(args.oldest)), has_more: false };
      },
    },
  };
  return { client: client as unknown as WebClient, thread, posted, reads: () => reads };
}

describe('createUpdatingAnswerStream, when the reply to a post is lost', () => {
  it('finds the message Slack posted all the same and carries on in it, with no second copy', async () => {
    const { client, thread, posted } = lostReplyClient({ lose: (_text, post) => (post === 1 ? 'applied' : undefined) });
    const reported: string[][] = [];
    const stream = createUpdatingAnswerStream({ client, logger, channel: 'C1', threadTs: '1.1', onMessages: (ts) => reported.push([...ts]) });
    stream.append('The worker');
    await vi.advanceTimersByTimeAsync(0);
    stream.append(' restarted.');
    await vi.advanceTimersByTimeAsync(1000);
    await stream.finish('The worker restarted. All pods are ready.');
    expect(posted).toEqual(['The worker']);
    expect(thread.map((message) => message.text)).toEqual(['The worker restarted. All pods are ready.']);
    expect(stream.messageTs()).toEqual([thread[0]!.ts]);
    expect(reported.at(-1)).toEqual(stream.messageTs());
  });

  it('does the same for the post that continues a long answer in a new message', async () => {
    const { client, thread, posted } = lostReplyClient({ lose: (_text, post) => (post === 2 ? 'applied' : undefined) });
    const stream = createUpdatingAnswerStream({ client, logger, channel: 'C1', threadTs: '1.1' });
    const paragraph = `${'word '.repeat(300).trim()}.`;
    const answer = [paragraph, paragraph, paragraph, paragraph].join('\n\n');
    stream.append(answer.slice(0, 2000));
    await vi.advanceTimersByTimeAsync(1000);
    stream.append(answer.slice(2000));
    await vi.advanceTimersByTimeAsync(1000);
    await stream.finish(answer);
    expect(posted).toHaveLength(2);
    expect(thread).toHaveLength(2);
    expect(stream.messageTs()).toEqual(thread.map((message) => message.ts));
    expect(thread.map((message) => message.text).join('\n\n')).toBe(answer);
  });

  it('posts again only when the thread shows Slack did not post it', async () => {
    const { client, thread, posted } = lostReplyClient({ lose: (_text, post) => (post === 1 ? 'not-applied' : undefined) });
    const stream = createUpdatingAnswerStream({ client, logger, channel: 'C1', threadTs: '1.1' });
    stream.append('The worker');
    await vi.advanceTimersByTimeAsync(0);
    expect(thread).toEqual([]);
    stream.append(' restarted.');
    await stream.finish('The worker restarted.');
    expect(posted).toEqual(['The worker', 'The worker restarted.']);
    expect(thread.map((message) => message.text)).toEqual(['The worker restarted.']);
  });

  it('posts nothing new until the thread can be read, then finds the message', async () => {
    const { client, thread, posted, reads } = lostReplyClient({ lose: (_text, post) => (post === 1 ? 'applied' : undefined), failReads: 1 });
    const stream = createUpdatingAnswerStream({ client, logger, channel: 'C1', threadTs: '1.1' });
    stream.append('The worker');
    await vi.advanceTimersByTimeAsync(0);
    expect(reads()).toBe(1);
    stream.append(' restarted.');
    await stream.finish('The worker restarted.');
    expect(reads()).toBe(2);
    expect(posted).toEqual(['The worker']);
    expect(thread.map((message) => message.text)).toEqual(['The worker restarted.']);
  });

  it('shows an answer posted at once, whose reply was lost, once and without failing', async () => {
    const { client, thread } = lostReplyClient({ lose: () => 'applied' });
    const stream = createUpdatingAnswerStream({ client, logger, channel: 'C1', threadTs: '1.1' });
    await stream.finish('Only one answer.');
    expect(thread.map((message) => message.text)).toEqual(['Only one answer.']);
    expect(stream.messageTs()).toEqual([thread[0]!.ts]);
  });
});
