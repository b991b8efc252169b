import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { FencedError } from './fenced-error.js';
import { isStoreUnavailable } from './store-unavailable.js';

describe('isStoreUnavailable', () => {
  it('is true for what a real ioredis client rejects with while nothing listens on its port', async () => {
    const redis = new Redis({ port: 1, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => 20 });
    redis.on('error', () => {});
    try {
      const failure = await redis.get('key').catch((error: unknown) => error);
      expect(isStoreUnavailable(failure)).toBe(true);
    } finally {
      redis.disconnect();
    }
  });

  it('is true for a server loading its data, a demoted primary and a cluster without a quorum', () => {
    for (const message of ['LOADING Redis is loading the dataset in memory', "READONLY You can't write against a read only replica.", 'CLUSTERDOWN The cluster is down', 'TRYAGAIN Multiple keys request during rehashing of slot']) {
      expect(isStoreUnavailable(new Error(message)), message).toBe(true);
    }
    expect(isStoreUnavailable(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(true);
  });

  it('is false for script errors, fenced writes and anything that is not an Error', () => {
    expect(isStoreUnavailable(new Error('ERR Error running script (call to f_1234): @user_script:1: user_script:1: attempt to compare nil with number'))).toBe(false);
    expect(isStoreUnavailable(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'))).toBe(false);
    expect(isStoreUnavailable(new FencedError('C1:1.1'))).toBe(false);
    expect(isStoreUnavailable('Connection is closed.')).toBe(false);
  });
});
