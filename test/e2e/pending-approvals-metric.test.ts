import { describe, expect, it } from 'vitest';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

/** The pending-approvals gauges are read from Redis when scraped: every replica reports the same. */
const harness = useHarnesses();

async function metricsOf(h: Harness): Promise<string> {
  const response = await fetch(h.metricsUrl);
  expect(response.status).toBe(200);
  return response.text();
}

function seriesValue(metrics: string, series: string): number | undefined {
  const line = metrics.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('pending approvals on GET /metrics', () => {
  it('shows waiting approvals by rule, with the age of the oldest, on every replica, until they are decided', async () => {
    let clock = Date.now();
    const h = await harness({ now: () => clock, extraYaml: 'policy:\n  rules:\n    - name: restarts\n      tools: [restart_service]\n' });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'Restarted.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the card' });
    clock += 20 * 60 * 1000;

    const replica = await h.startReplica();
    try {
      for (const process of [h, replica]) {
        const metrics = await metricsOf(process);
        expect(seriesValue(metrics, 'countersign_approvals_pending{rule="restarts"}')).toBe(1);
        expect(seriesValue(metrics, 'countersign_approval_oldest_pending_seconds{rule="restarts"}')).toBeGreaterThanOrEqual(20 * 60);
      }

      await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')! });
      await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted.'), { message: 'the answer' });
      expect(seriesValue(await metricsOf(replica), 'countersign_approvals_pending{rule="restarts"}')).toBeUndefined();
    } finally {
      await replica.stop();
    }
  });
});
