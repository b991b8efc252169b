import { describe, expect, it } from 'vitest';
import { createSharedHealthProbe } from './shared-health-probe.js';

/** A probe whose every call waits to be settled by the test. */
function controlledProbe() {
  const calls: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  const probe = () =>
    new Promise<void>((resolve, reject) => {
      calls.push({ resolve, reject });
    });
  return { probe, calls };
}

describe('the shared health probe', () => {
  it('runs once for concurrent checks, and answers from a success until it is reuseForMs old', async () => {
    let clock = 0;
    const { probe, calls } = controlledProbe();
    const shared = createSharedHealthProbe(probe, { reuseForMs: 1_000, now: () => clock });
    const checks = Array.from({ length: 5 }, () => shared.run());
    expect(calls).toHaveLength(1);
    calls[0]?.resolve();
    await Promise.all(checks);
    clock = 999;
    await shared.run();
    expect(calls).toHaveLength(1);
    clock = 1_000;
    const again = shared.run();
    expect(calls).toHaveLength(2);
    calls[1]?.resolve();
    await again;
  });

  it('keeps no failure: the next check probes again', async () => {
    const { probe, calls } = controlledProbe();
    const shared = createSharedHealthProbe(probe, { now: () => 0 });
    const first = [shared.run(), shared.run()];
    calls[0]?.reject(new Error('NOREPLICAS'));
    for (const check of first) await expect(check).rejects.toThrow('NOREPLICAS');
    const second = shared.run();
    expect(calls).toHaveLength(2);
    calls[1]?.resolve();
    await second;
  });

  it('forgets a success when told (a store call failed), and does not keep one that started before', async () => {
    const { probe, calls } = controlledProbe();
    const shared = createSharedHealthProbe(probe, { now: () => 0 });
    const first = shared.run();
    calls[0]?.resolve();
    await first;
    shared.forget();
    const second = shared.run();
    expect(calls).toHaveLength(2);
    shared.forget();
    calls[1]?.resolve();
    await second;
    const third = shared.run();
    expect(calls).toHaveLength(3);
    calls[2]?.resolve();
    await third;
  });
});
