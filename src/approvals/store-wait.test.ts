import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { noMetrics } from '../metrics/metrics.js';
import { createStoreWait } from './store-wait.js';

function recorder() {
  const lines: Array<{ event?: string }> = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  let waits = 0;
  const metrics = { ...noMetrics, decisionWaitedForStore: () => void (waits += 1) };
  return { lines, logger, metrics, waits: () => waits };
}

describe('waiting out an unavailable store', () => {
  it('tries again every 250 ms, logs the outage once per decision and counts every wait', async () => {
    const { lines, logger, metrics, waits } = recorder();
    const { whileStoreReturns } = createStoreWait({ logger, metrics });
    let reads = 0;
    const value = await whileStoreReturns(
      async () => {
        reads += 1;
        if (reads <= 3) throw new Error('Connection is closed.');
        return 'step';
      },
      { stepId: 'st1', waitUntil: Date.now() + 5_000 },
    );
    expect(value).toBe('step');
    expect(reads).toBe(4);
    expect(waits()).toBe(3);
    expect(lines.filter((line) => line.event === 'decision-store-unavailable')).toHaveLength(1);
  });

  it('gives up with the store error once a wait would end past the deadline', async () => {
    const { logger, metrics } = recorder();
    const { whileStoreReturns } = createStoreWait({ logger, metrics });
    const failure = new Error('Connection is closed.');
    await expect(
      whileStoreReturns(
        async () => {
          throw failure;
        },
        { stepId: 'st1', waitUntil: Date.now() + 600 },
      ),
    ).rejects.toBe(failure);
  });
});
