import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { newTokenNonce, nextFencingToken } from './fencing-token.js';
import { createRedisKeys } from './redis-keys.js';
import { createRedisStore } from './redis-store.js';

/** How releases before `<counter>.<nonce>` issued a token (TRY_LOCK_SCRIPT then): a rolling upgrade runs both. */
const OLDER_RELEASE_TRY_LOCK = `
if redis.call('EXISTS', KEYS[1]) == 1 then return false end
local last = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
local token = string.format('%.0f', math.max(last + 1, tonumber(ARGV[2])))
redis.call('SET', KEYS[2], token, 'PX', ARGV[3])
redis.call('SET', KEYS[1], token, 'PX', ARGV[1])
return token
`;

describe('fencing tokens', () => {
  it('count on from the last token (or the clock, when that is later) and tell apart two issued from the same last one', () => {
    const now = 1_800_000_000_000;
    expect(nextFencingToken({ last: undefined, now, nonce: '000000000042' })).toBe(`${now}.000000000042`);
    expect(nextFencingToken({ last: `${now + 5_000}.123456789012`, now, nonce: '000000000042' })).toBe(`${now + 5_001}.000000000042`);
    expect(nextFencingToken({ last: `${now - 5_000}.123456789012`, now, nonce: '7' })).toBe(`${now}.7`);
    // What a failover that lost the newest token does: two acquisitions from the same last token.
    const last = `${now + 5_000}.123456789012`;
    expect(nextFencingToken({ last, now, nonce: newTokenNonce() })).not.toBe(nextFencingToken({ last, now, nonce: newTokenNonce() }));
    expect(newTokenNonce()).toMatch(/^\d{12}$/);
  });

  it("read an older release's token (a plain number) as its counter", () => {
    expect(nextFencingToken({ last: '1800000005000', now: 1_800_000_000_000, nonce: '1' })).toBe('1800000005001.1');
    expect(Number(nextFencingToken({ last: '1800000005000', now: 0, nonce: '999999999999' }))).toBeGreaterThan(1800000005000);
  });
});

describe('fencing tokens across a rolling upgrade (Redis)', () => {
  const keyPrefix = `fencing-token:${randomUUID()}:`;
  const store = createRedisStore({ url: inject('redisUrl'), keyPrefix });
  const raw = new Redis(inject('redisUrl'));
  const keys = createRedisKeys({ keyPrefix });
  afterAll(async () => {
    await store.close();
    raw.disconnect();
  });

  it("counts on from an older release's token, and an older release counts on from a new one", async () => {
    const threadKey = `T1:C1:${randomUUID()}`;
    const at = keys.ofThread(threadKey);
    const ahead = Date.now() + 60_000;
    const older = (await raw.eval(OLDER_RELEASE_TRY_LOCK, 2, at.lock(threadKey), at.fence(threadKey), 60_000, ahead, 60_000)) as string;
    expect(older).toBe(String(ahead));
    await raw.del(at.lock(threadKey));

    const newer = (await store.tryLock(threadKey, 60_000))!;
    expect(newer).toMatch(new RegExp(`^${ahead + 1}\\.\\d{12}$`));
    expect(await store.fenceState({ threadKey, token: older })).not.toBe('current');
    expect(await store.releaseLockIfIdle({ threadKey, token: newer }, 60_000)).toBe('released');

    // An older release still running reads the new token as a number: its next one is larger, and another.
    const next = (await raw.eval(OLDER_RELEASE_TRY_LOCK, 2, at.lock(threadKey), at.fence(threadKey), 60_000, Date.now(), 60_000)) as string;
    expect(Number(next)).toBeGreaterThan(Number(newer));
    expect(await store.fenceState({ threadKey, token: newer })).not.toBe('current');
    expect(await store.fenceState({ threadKey, token: next })).toBe('current');
  });
});
