import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { FencedError } from './fenced-error.js';
import { reportingCommandFailures, type RedisFailureListener } from './redis-failures.js';
import { createRedisStore } from './redis-store.js';

const opened: Array<{ close(): unknown }> = [];
afterEach(async () => {
  while (opened.length > 0) await opened.pop()?.close();
});

function recordingListener() {
  const kinds: string[] = [];
  let notify: () => void = () => {};
  const listener: RedisFailureListener = ({ kind }) => {
    kinds.push(kind);
    notify();
  };
  const next = (kind: string) =>
    new Promise<void>((resolve) => {
      notify = () => kinds.includes(kind) && resolve();
      notify();
    });
  return { kinds, listener, next };
}

describe('Redis failures reported for the metrics', () => {
  it('reports a store operation that Redis rejects, and the caller still sees the error', async () => {
    const keyPrefix = `failures:${randomUUID()}:`;
    const { kinds, listener } = recordingListener();
    const store = createRedisStore({ url: inject('redisUrl'), keyPrefix, onRedisError: listener });
    opened.push(store);
    // A thread whose message list is a string makes the read script's LRANGE fail (WRONGTYPE).
    const other = new Redis(inject('redisUrl'));
    opened.push({ close: () => other.quit() });
    await other.hset(`${keyPrefix}thread:T1:C1:1.0`, 'meta', '{}', 'revision', '1');
    await other.set(`${keyPrefix}thread-messages:T1:C1:1.0`, 'not a list');

    await expect(store.getThread('T1:C1:1.0')).rejects.toThrow(/WRONGTYPE/);
    expect(kinds).toEqual(['command']);
    await store.ping();
    expect(kinds).toEqual(['command']);
  });

  it('reports a connection that cannot reach Redis', async () => {
    const { listener, next } = recordingListener();
    // Port 1 refuses connections: the client reports it and keeps retrying.
    const store = createRedisStore({ url: 'redis://127.0.0.1:1', keyPrefix: 'unreachable:', onRedisError: listener });
    opened.push(store);
    await next('connection');
  });

  it('does not count a fenced write: another process holding the thread is an expected outcome', async () => {
    const { kinds, listener } = recordingListener();
    const target = {
      saveThread: async () => {
        throw new FencedError('T1:C1:1.0');
      },
    };
    const wrapped = reportingCommandFailures(target, { onFailure: listener, active: () => true });
    await expect(wrapped.saveThread()).rejects.toBeInstanceOf(FencedError);
    expect(kinds).toEqual([]);
  });
});
