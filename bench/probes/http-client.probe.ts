import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { startFakeOpenAI } from '../../test/helpers/fake-openai.js';
import { startFakeSlackApi } from '../../test/helpers/fake-slack-api.js';
import { median } from '../lib/stats.js';

/**
 * `npm run bench:probe`: what the bot's HTTP clients cost per call, Node's `fetch` against the lean
 * fetch (src/http/lean-fetch.ts) in the same run: a Slack `chat.postMessage` through the Slack client
 * and a streamed Responses API answer through the AI SDK, each a few thousand times, alternating.
 * Prints CPU per call (the client process only) and the ratio lean ÷ fetch, median over rounds.
 */
it('compares the CPU per call of fetch and the lean fetch', async () => {
  const slack = await startFakeSlackApi();
  const openai = await startFakeOpenAI();
  openai.setResponder(() => ({ text: 'The worker in staging restarted at 10:42 and is healthy again.' }));
  try {
    const child = spawn(process.execPath, [join(import.meta.dirname, '../http-client-cost.ts')], {
      cwd: join(import.meta.dirname, '../..'),
      env: { ...process.env, SLACK_URL: slack.url, OPENAI_URL: openai.baseURL },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(0);
    const rows = output
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { round: number; variant: 'fetch' | 'lean'; kind: 'slack' | 'model'; calls: number; cpuMicroseconds: number });
    for (const kind of ['slack', 'model'] as const) {
      // The first round warms the JIT up; it is left out.
      const perCall = (variant: 'fetch' | 'lean') => rows.filter((row) => row.kind === kind && row.variant === variant && row.round > 0).map((row) => row.cpuMicroseconds / row.calls);
      const ratios = rows
        .filter((row) => row.kind === kind && row.variant === 'lean' && row.round > 0)
        .map((lean) => lean.cpuMicroseconds / (rows.find((row) => row.kind === kind && row.variant === 'fetch' && row.round === lean.round)?.cpuMicroseconds ?? Number.NaN));
      process.stdout.write(
        `${kind}: CPU µs per call, fetch ${perCall('fetch').map(Math.round).join(' ')} | lean ${perCall('lean').map(Math.round).join(' ')} | lean ÷ fetch median ${median(ratios).toFixed(2)} (${ratios.map((ratio) => ratio.toFixed(2)).join(' ')})\n`,
      );
    }
  } finally {
    await Promise.all([slack.close(), openai.close()]);
  }
});
