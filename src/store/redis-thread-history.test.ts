import { randomUUID } from 'node:crypto';
import type { ModelMessage } from 'ai';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createRedisKeys } from './redis-keys.js';
import { parseHistory } from '../agent/history.js';
import { createRedisStore } from './redis-store.js';
import { createThreadHistories } from './redis-thread-history.js';
import type { StateStore } from './state-store.js';
import { newThreadState, type ThreadState } from './thread-state.js';

const TTL = 60_000;
const opened: Array<{ close(): unknown }> = [];
afterEach(async () => {
  while (opened.length > 0) await opened.pop()?.close();
});

/** A store whose client counts the bytes of every command it sends, as a second process would. */
function countingStore(keyPrefix: string): { store: StateStore; bytesSent: () => number } {
  const redis = new Redis(inject('redisUrl'));
  let bytes = 0;
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = ((command: { args: unknown[] }) => {
    for (const arg of command.args) bytes += Buffer.byteLength(String(arg));
    return send(command as never);
  }) as typeof redis.sendCommand;
  const store = createRedisStore({ redis, keyPrefix });
  opened.push(store);
  return { store, bytesSent: () => bytes };
}

const exchange = (index: number): ModelMessage[] => [
  { role: 'user', content: `question ${index}: ${'x'.repeat(900)}` },
  { role: 'assistant', content: [{ type: 'text', text: `answer ${index}: ${'y'.repeat(900)}` }] },
];

async function threadWith(store: StateStore, exchanges: number): Promise<{ thread: ThreadState; fence: { threadKey: string; token: string } }> {
  const thread = newThreadState({ teamId: 'T1', channel: 'C1', threadTs: `${Date.now()}.${randomUUID().slice(0, 6)}` }, Date.now());
  const fence = { threadKey: thread.threadKey, token: (await store.tryLock(thread.threadKey, TTL))! };
  for (let index = 0; index < exchanges; index += 1) thread.messages.push(...exchange(index));
  await store.saveThread(thread, TTL, fence);
  return { thread, fence };
}

describe('the Redis thread history', () => {
  it('writes only the new messages on a save, however long the history is', async () => {
    const { store, bytesSent } = countingStore(`history-${randomUUID()}:`);
    const { thread, fence } = await threadWith(store, 100);
    expect(bytesSent()).toBeGreaterThan(180_000);
    const before = bytesSent();
    thread.messages.push(...exchange(100));
    thread.outbox = 'done';
    await store.saveThread(thread, TTL, fence);
    expect(bytesSent() - before).toBeLessThan(5_000);
    expect(await store.getThread(thread.threadKey)).toEqual(thread);
  });

  it('trims from the front and replaces a message changed in place without rewriting the rest', async () => {
    const { store, bytesSent } = countingStore(`history-${randomUUID()}:`);
    const { thread, fence } = await threadWith(store, 50);
    const before = bytesSent();
    thread.messages = thread.messages.slice(10);
    thread.messages[thread.messages.length - 1] = { role: 'assistant', content: [{ type: 'text', text: 'changed in place' }] };
    thread.messages.push(...exchange(50));
    await store.saveThread(thread, TTL, fence);
    expect(bytesSent() - before).toBeLessThan(5_000);
    expect((await store.getThread(thread.threadKey))?.messages).toEqual(thread.messages);
  });

  it('stays exact when another process wrote in between: the stale write is refused and sent whole', async () => {
    const keyPrefix = `history-${randomUUID()}:`;
    const first = countingStore(keyPrefix).store;
    const second = countingStore(keyPrefix).store;
    const { thread, fence } = await threadWith(first, 3);
    // The other process takes the thread over and adds an exchange.
    const taken = (await second.getThread(thread.threadKey))!;
    taken.messages.push(...exchange(3));
    await second.saveThread(taken, TTL, fence);
    // This process still believes its own last write is stored.
    thread.messages.push(...exchange(99));
    await first.saveThread(thread, TTL, fence);
    expect((await second.getThread(thread.threadKey))?.messages).toEqual(thread.messages);
  });

  it('reads a thread saved as one JSON string before histories were lists, and converts it on the next save', async () => {
    const keyPrefix = `history-${randomUUID()}:`;
    const { store } = countingStore(keyPrefix);
    const legacy = { ...newThreadState({ teamId: 'T1', channel: 'C1', threadTs: '1700000000.000100' }, 1), messages: exchange(0) };
    const redis = new Redis(inject('redisUrl'));
    opened.push({ close: () => redis.quit() });
    await redis.set(`${keyPrefix}thread:${legacy.threadKey}`, JSON.stringify(legacy));
    const read = (await store.getThread(legacy.threadKey))!;
    expect(read).toEqual(legacy);
    read.messages.push(...exchange(1));
    await store.saveThread(read, TTL, { threadKey: legacy.threadKey, token: (await store.tryLock(legacy.threadKey, TTL))! });
    const at = createRedisKeys({ keyPrefix }).ofThread(legacy.threadKey);
    expect(await redis.type(at.thread(legacy.threadKey))).toBe('hash');
    expect(await redis.llen(at.messages(legacy.threadKey))).toBe(4);
    expect((await store.getThread(legacy.threadKey))?.messages).toEqual(read.messages);
  });

  it('reads a message that is not JSON as one the history validation refuses, and fields that are not JSON as no thread', async () => {
    const histories = createThreadHistories();
    const { messages, ...meta } = { ...newThreadState({ teamId: 'T1', channel: 'C1', threadTs: '1700000000.000200' }, 1), messages: exchange(0) };
    const stored = messages.map((message) => JSON.stringify(message));
    const read = histories.read(meta.threadKey, ['list', JSON.stringify(meta), '3', [stored[0]!.slice(0, 20), stored[1]!]]);
    // The loader then starts the history fresh instead of every message of the thread failing.
    expect(read?.threadKey).toBe(meta.threadKey);
    expect(parseHistory(read?.messages)).toEqual({ messages: [], valid: false });
    expect(histories.read(meta.threadKey, ['list', '{"schemaVersion":1,"thr', '3', stored])).toBeUndefined();
    expect(histories.read(meta.threadKey, ['legacy', '{"schemaVersion":1,"thr'])).toBeUndefined();
  });
});
