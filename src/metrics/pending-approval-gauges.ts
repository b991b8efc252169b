import { Gauge, type Registry } from 'prom-client';
import type { PendingApprovalsByRule } from './metrics.js';

export interface PendingApprovalGaugeOptions {
  registry: Registry;
  read: () => Promise<PendingApprovalsByRule[]>;
  now: () => number;
}

/**
 * `countersign_approvals_pending{rule}` and `countersign_approval_oldest_pending_seconds{rule}`,
 * computed at scrape time. Both gauges share one read per scrape. A failed read leaves them empty
 * rather than failing the whole scrape: the process metrics still arrive, and an alert on the
 * gauge's absence can catch it.
 */
export function registerPendingApprovalGauges({ registry, read, now }: PendingApprovalGaugeOptions): void {
  // A scrape calls both collects before either read settles, so they share it; the next scrape reads anew.
  let current: Promise<PendingApprovalsByRule[]> | undefined;
  const latest = () => {
    current ??= read()
      .catch(() => [])
      .finally(() => {
        current = undefined;
      });
    return current;
  };
  new Gauge({
    name: 'countersign_approvals_pending',
    help: 'Approval requests waiting for a decision, by policy rule (read from the store when scraped).',
    labelNames: ['rule'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const { rule, pending } of await latest()) this.set({ rule }, pending);
    },
  });
  new Gauge({
    name: 'countersign_approval_oldest_pending_seconds',
    help: 'Age of the oldest approval request still waiting, by policy rule.',
    labelNames: ['rule'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const { rule, oldestCreatedAt } of await latest()) this.set({ rule }, Math.max(0, now() - oldestCreatedAt) / 1000);
    },
  });
}
