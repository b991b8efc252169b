import { describe, expect, it } from 'vitest';
import { FencedError } from '../store/fenced-error.js';
import type { FenceState } from '../store/state-store.js';
import { createLease } from './lease.js';
import { StateLostError } from './state-lost-error.js';

const fence = { threadKey: 'T1:C1:1.1', token: '7' };

function setup(answer: () => Promise<FenceState>) {
  const clock = { now: 1_000, heldUntil: 2_000, asked: 0, statesLost: 0 };
  const lease = createLease({
    store: {
      fenceState: async () => {
        clock.asked += 1;
        return answer();
      },
    },
    fence,
    heldUntil: () => clock.heldUntil,
    now: () => clock.now,
    onStateLost: () => (clock.statesLost += 1),
  });
  return { clock, lease };
}

describe('lease', () => {
  it('asks Redis nothing while the lock it last renewed cannot have lapsed, and asks once it may have', async () => {
    const { clock, lease } = setup(async () => 'taken');
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
    const { lease } = setup(async () => 'taken');
    await expect(lease.guard(async () => Promise.reject(new FencedError(fence.threadKey)))).rejects.toBeInstanceOf(FencedError);
    expect(lease.lost()).toBe(true);
    await expect(lease.assertCurrent()).rejects.toBeInstanceOf(FencedError);
  });

  it('lets a running call finish when Redis lost the token, and stops the turn at its next check as state lost, not fenced', async () => {
    const { clock, lease } = setup(async () => 'missing');
    lease.markMissing();
    expect(lease.signal.aborted).toBe(false);
    expect(lease.stateLost()).toBe(true);
    expect(clock.statesLost).toBe(1);
    // The lock cannot have lapsed by this clock, but a token known gone is asked about all the same.
    await expect(lease.assertHeld()).rejects.toBeInstanceOf(StateLostError);
    expect(lease.signal.reason).toBeInstanceOf(StateLostError);
    expect(lease.lost()).toBe(true);
    expect(lease.stateLost()).toBe(true);
    expect(clock.statesLost).toBe(1);
  });

  it('answers a write refused for a lost token with StateLostError (no take-back), and one refused for a newer token as fenced', async () => {
    let state: FenceState = 'missing';
    const { clock, lease } = setup(async () => state);
    await expect(lease.guard(async () => Promise.reject(new FencedError(fence.threadKey)))).rejects.toBeInstanceOf(StateLostError);
    expect(lease.stateLost()).toBe(true);
    expect(clock.statesLost).toBe(1);
    // A new message took the thread since: the old holder is fenced as any other, and says nothing.
    state = 'taken';
    await expect(lease.guard(async () => Promise.reject(new FencedError(fence.threadKey)))).rejects.toBeInstanceOf(FencedError);
    expect(lease.stateLost()).toBe(false);
    await expect(lease.assertCurrent()).rejects.toBeInstanceOf(FencedError);
  });
});
