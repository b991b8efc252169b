import { describe, expect, it } from 'vitest';
import { FencedError } from '../store/fenced-error.js';
import { createLease } from './lease.js';

const fence = { threadKey: 'T1:C1:1.1', token: '7' };

function setup(answer: () => Promise<boolean>) {
  const clock = { now: 1_000, heldUntil: 2_000, asked: 0 };
  const lease = createLease({
    store: { isCurrent: async () => ((clock.asked += 1), answer()) },
    fence,
    heldUntil: () => clock.heldUntil,
    now: () => clock.now,
  });
  return { clock, lease };
}

describe('lease', () => {
  it('asks Redis nothing while the lock it last renewed cannot have lapsed, and asks once it may have', async () => {
    const { clock, lease } = setup(async () => false);
    await lease.assertHeld();
    expect(clock.asked).toBe(0);
    clock.now = 2_000;
    await expect(lease.assertHeld()).rejects.toBeInstanceOf(FencedError);
    expect(clock.asked).toBe(1);
    expect(lease.lost()).toBe(true);
    expect(lease.signal.aborted).toBe(true);
  });

  it('lets a notice out during a Redis outage only while the lock cannot have lapsed', async () => {
    const { clock, lease } = setup(async () => {
      throw new Error('connect ECONNREFUSED');
    });
    await lease.assertCurrent();
    clock.now = 2_500;
    await expect(lease.assertCurrent()).rejects.toThrow('ECONNREFUSED');
    expect(lease.lost()).toBe(false);
  });

  it('ends when a guarded write is fenced, and stays ended', async () => {
    const { lease } = setup(async () => true);
    await expect(lease.guard(async () => Promise.reject(new FencedError(fence.threadKey)))).rejects.toBeInstanceOf(FencedError);
    expect(lease.lost()).toBe(true);
    await expect(lease.assertCurrent()).rejects.toBeInstanceOf(FencedError);
  });
});
