import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryAuditLog } from '../../src/audit/memory-audit-log.js';
import { parseConfigFile } from '../../src/config/config-file.js';
import { parseEnvironment } from '../../src/config/environment.js';
import { createBot, type Bot, type CreateBotOptions } from '../../src/create-bot.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { BOT_USER_ID, SIGNING_SECRET } from './harness.js';

/**
 * In HTTP mode PORT takes Slack's requests, so the internet reaches it: `GET /metrics` (tool and rule
 * names, pending approvals, a Redis read per scrape) is served on METRICS_PORT, a port of its own that
 * the ingress does not expose, and not on PORT unless METRICS_PORT is PORT. `/healthz` stays on PORT
 * for the load balancer, with a copy on METRICS_PORT for probes. Real HTTP requests, in process.
 */
const running: Bot[] = [];
afterEach(async () => {
  while (running.length > 0) await running.pop()?.stop();
});

async function startBot(variables: Record<string, string>, options: Pick<CreateBotOptions, 'role'> = {}) {
  const logged: Array<{ level: number; event?: string; metrics?: string; msg: string }> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
  const environment = parseEnvironment({
    SLACK_BOT_TOKEN: 'xoxb-test-token',
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_BOT_USER_ID: BOT_USER_ID,
    SLACK_BOT_ID: 'BBOT0001',
    OPENAI_API_KEY: 'sk-test',
    ...variables,
  });
  const audit = createMemoryAuditLog({ logger });
  const bot = await createBot({ environment, config: parseConfigFile('instructions: test', 'test.yml'), logger, store: createMemoryStore({ audit }), audit, ...options });
  running.push(bot);
  const { port, metricsPort } = await bot.start({ port: 0, host: '127.0.0.1', metricsPort: 0, metricsHost: '127.0.0.1' });
  const started = logged.find((line) => line.event === 'started');
  const notice = logged.find((line) => line.event === 'metrics-placement');
  return { slackPort: `http://127.0.0.1:${port}`, metricsPort: metricsPort === undefined ? undefined : `http://127.0.0.1:${metricsPort}`, started, notice };
}

const get = (url: string) => fetch(url).then(async (response) => ({ status: response.status, type: response.headers.get('content-type') ?? '', body: await response.text() }));

describe('where GET /metrics is served', () => {
  it('with METRICS_PORT: only there, with /healthz on both ports; the Slack port answers 404', async () => {
    const bot = await startBot({ METRICS_PORT: '9464' });
    expect(bot.metricsPort).toBeDefined();
    const metrics = await get(`${bot.metricsPort}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.type).toContain('text/plain');
    expect(metrics.body).toMatch(/^countersign_turns_running 0$/m);
    expect((await get(`${bot.slackPort}/metrics`)).status).toBe(404);
    for (const base of [bot.slackPort, bot.metricsPort]) expect(JSON.parse((await get(`${base}/healthz`)).body)).toMatchObject({ status: 'ok' });
    // The metrics port takes no Slack requests.
    expect((await fetch(`${bot.metricsPort}/slack/events`, { method: 'POST', body: '{}' })).status).toBe(404);
    expect(bot.started).toMatchObject({ metrics: expect.stringMatching(/^METRICS_PORT \d+$/) });
  });

  it('without METRICS_PORT: not served on the port Slack posts to, and the start-up log says how to turn it on', async () => {
    const bot = await startBot({});
    expect(bot.metricsPort).toBeUndefined();
    expect((await get(`${bot.slackPort}/metrics`)).status).toBe(404);
    expect((await get(`${bot.slackPort}/healthz`)).status).toBe(200);
    expect(bot.started).toMatchObject({ metrics: 'off' });
    expect(bot.notice?.msg).toContain('Set METRICS_PORT');
  });

  it('with METRICS_PORT equal to PORT: on the Slack port, as asked, with a warning', async () => {
    const bot = await startBot({ PORT: '3000', METRICS_PORT: '3000' });
    expect(bot.metricsPort).toBeUndefined();
    const metrics = await get(`${bot.slackPort}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatch(/^countersign_turns_running 0$/m);
    expect(bot.notice).toMatchObject({ level: 40, metrics: 'PORT' });
  });

  it("a worker (its PORT takes no Slack requests) serves /metrics on PORT, or only on METRICS_PORT when that is set", async () => {
    const alone = await startBot({}, { role: 'worker' });
    expect((await get(`${alone.slackPort}/metrics`)).status).toBe(200);
    expect(alone.notice).toBeUndefined();

    const split = await startBot({ METRICS_PORT: '9464' }, { role: 'worker' });
    expect((await get(`${split.slackPort}/metrics`)).status).toBe(404);
    expect((await get(`${split.slackPort}/healthz`)).status).toBe(200);
    expect((await get(`${split.metricsPort}/metrics`)).status).toBe(200);
    expect((await get(`${split.metricsPort}/healthz`)).status).toBe(200);
  });
});
