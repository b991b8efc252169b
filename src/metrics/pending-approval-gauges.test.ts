import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { registerPendingApprovalGauges } from './pending-approval-gauges.js';

describe('registerPendingApprovalGauges', () => {
  it('reads the store once per scrape and reports each rule, with the oldest request age', async () => {
    const registry = new Registry();
    let reads = 0;
    registerPendingApprovalGauges({
      registry,
      now: () => 100_000,
      read: async () => {
        reads += 1;
        return [{ rule: 'restarts', pending: 3, oldestCreatedAt: 40_000 }];
      },
    });
    const text = await registry.metrics();
    expect(text).toContain('countersign_approvals_pending{rule="restarts"} 3');
    expect(text).toContain('countersign_approval_oldest_pending_seconds{rule="restarts"} 60');
    expect(reads).toBe(1);
  });

  it('forgets rules with nothing pending, and keeps the scrape working when the store cannot be read', async () => {
    const registry = new Registry();
    const answers: Array<() => Promise<Array<{ rule: string; pending: number; oldestCreatedAt: number }>>> = [
      async () => [{ rule: 'restarts', pending: 1, oldestCreatedAt: 0 }],
      async () => {
        throw new Error('redis down');
      },
    ];
    registerPendingApprovalGauges({ registry, now: () => 0, read: () => answers.shift()!() });
    expect(await registry.metrics()).toContain('countersign_approvals_pending{rule="restarts"} 1');
    expect(await registry.metrics()).not.toContain('rule="restarts"');
  });
});
