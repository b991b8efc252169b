import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { assertTakesWrites } from './redis-takes-writes.js';
import { isStoreUnavailable } from './store-unavailable.js';

const server = (options: { isCluster?: boolean; role: () => Promise<unknown[]> }) => ({ isCluster: false, ...options }) as unknown as Redis;

describe('assertTakesWrites', () => {
  it('passes a primary, and refuses a replica as the store being unavailable', async () => {
    await expect(assertTakesWrites(server({ role: async () => ['master', 0, []] }))).resolves.toBeUndefined();
    const refused = await assertTakesWrites(server({ role: async () => ['slave', '10.0.0.1', 6379, 'connected', 0] })).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/^READONLY .*slave/);
    expect(isStoreUnavailable(refused)).toBe(true);
  });

  it('takes a server that refuses ROLE (renamed, or denied by an ACL) to take writes, and does not ask a Cluster', async () => {
    await expect(assertTakesWrites(server({ role: () => Promise.reject(new Error("ERR unknown command 'ROLE', with args beginning with: ")) }))).resolves.toBeUndefined();
    await expect(assertTakesWrites(server({ role: () => Promise.reject(new Error("NOPERM User probe has no permissions to run the 'role' command")) }))).resolves.toBeUndefined();
    await expect(assertTakesWrites(server({ isCluster: true, role: () => Promise.reject(new Error('not asked')) }))).resolves.toBeUndefined();
  });

  it('passes a lost connection on', async () => {
    await expect(assertTakesWrites(server({ role: () => Promise.reject(new Error('Connection is closed.')) }))).rejects.toThrow('Connection is closed.');
  });
});
