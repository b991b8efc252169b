import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../src/config/config-file.js';
import { parseEnvironment } from '../../src/config/environment.js';
import { createBot } from '../../src/create-bot.js';
import { BOT_USER_ID, cardButtons, nextTs, SIGNING_SECRET, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

/** A command that writes when it starts and holds until a file appears (then writes that it ended). */
const HOLD_UNTIL_RELEASED = join(import.meta.dirname, '../fixtures/hold-until-released.mjs');

/** `GET /metrics`, in Prometheus's format, counts what people and tools did: read through the real HTTP receiver. */
const harness = useHarnesses();

async function metricsOf(h: Harness): Promise<string> {
  const response = await fetch(h.metricsUrl);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  return response.text();
}

function seriesValue(metrics: string, series: string): number | undefined {
  const line = metrics.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Scrapes `/metrics` until every series named has its value (a state the test waits for); returns that scrape. */
function scrapeWhen(h: Harness, values: Record<string, number>, message: string): Promise<string> {
  return waitFor(
    async () => {
      const metrics = await metricsOf(h);
      return Object.entries(values).every(([series, value]) => seriesValue(metrics, series) === value) ? metrics : undefined;
    },
    { message },
  );
}

describe('GET /metrics', () => {
  it('counts a decision, a refused click, a tool run and the turns, with Node process metrics beside them', async () => {
    const h = await harness();
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'Restarted.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in staging', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the card' });
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    const before = await metricsOf(h);
    expect(seriesValue(before, 'countersign_turn_duration_seconds_count{outcome="waiting"}')).toBe(1);
    expect(seriesValue(before, 'countersign_decisions_total{outcome="approved"}')).toBeUndefined();

    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    // A second click on the decided call is refused, and counted as such.
    await h.click({ user: 'UCAROL', cardTs: card.ts, threadTs, ...approve });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text?.includes('Restarted.')), { message: 'the answer' });
    await h.settled();

    const after = await metricsOf(h);
    expect(seriesValue(after, 'countersign_decisions_total{outcome="approved"}')).toBe(1);
    expect(seriesValue(after, 'countersign_time_to_decision_seconds_count{outcome="approved"}')).toBe(1);
    expect(seriesValue(after, 'countersign_refusals_total{reason="already-decided"}')).toBe(1);
    expect(seriesValue(after, 'countersign_tool_executions_total{tool="restart_service",status="ok"}')).toBe(1);
    expect(seriesValue(after, 'countersign_turn_duration_seconds_count{outcome="answered"}')).toBe(1);
    expect(after).toContain('countersign_process_cpu_user_seconds_total');
  });

  it('times model calls and counts their tokens, and counts failed Slack calls by method and error, 429s included', async () => {
    // The status line goes out at once (not only for turns that take a while), for Slack to refuse it.
    const h = await harness({ statusDelayMs: 0 });
    h.openai.enqueue({ toolCalls: [{ name: 'get_pods', arguments: { namespace: 'staging' } }] }, { text: 'Two pods are running.' });
    // Slack throttles the first post (the client waits and retries it) and refuses the status line.
    h.slack.failNext('chat.postMessage', { status: 429, retryAfterSeconds: 0 });
    h.slack.failNext('assistant.threads.setStatus', { error: 'missing_scope' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'which pods run in staging?', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text?.includes('Two pods are running.')), { message: 'the answer' });
    await h.settled();

    const metrics = await metricsOf(h);
    expect(seriesValue(metrics, 'countersign_model_call_duration_seconds_count{outcome="ok"}')).toBe(2);
    expect(seriesValue(metrics, 'countersign_model_tokens_total{kind="input"}')).toBeGreaterThan(0);
    expect(seriesValue(metrics, 'countersign_model_tokens_total{kind="output"}')).toBeGreaterThan(0);
    expect(seriesValue(metrics, 'countersign_slack_api_errors_total{method="chat.postMessage",error="rate_limited"}')).toBe(1);
    expect(seriesValue(metrics, 'countersign_slack_api_errors_total{method="assistant.threads.setStatus",error="missing_scope"}')).toBe(1);
  });

  it('counts a model call that fails, beside the failed turn', async () => {
    const h = await harness();
    h.openai.setResponder(() => ({ error: { status: 400, message: 'context too long' } }));
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'which pods run in staging?', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).length > 0, { message: 'the failure notice' });
    await h.settled();

    const metrics = await metricsOf(h);
    expect(seriesValue(metrics, 'countersign_model_call_duration_seconds_count{outcome="error"}')).toBe(1);
    expect(seriesValue(metrics, 'countersign_model_call_duration_seconds_count{outcome="ok"}')).toBeUndefined();
    expect(seriesValue(metrics, 'countersign_turn_duration_seconds_count{outcome="failed"}')).toBe(1);
  });

  it('shows the turns running and those waiting for room, and how long turns waited to start', async () => {
    // Room for one turn at a time; the model holds its calls until the test lets them go.
    const h = await harness({ environment: { COUNTERSIGN_MAX_CONCURRENT_TURNS: '1' } });
    const held: Array<() => void> = [];
    let holding = true;
    h.openai.setResponder(async () => {
      if (holding) await new Promise<void>((resolve) => held.push(resolve));
      return { text: 'The pods are fine.' };
    });
    try {
      const threads = [nextTs(), nextTs()];
      for (const threadTs of threads) await h.mention({ user: 'UALICE', text: 'how are the pods?', ts: threadTs });
      await waitFor(() => held.length === 1, { message: 'the first turn at the model' });
      await scrapeWhen(h, { countersign_turns_running: 1, countersign_turns_waiting: 1 }, 'the second turn counted as waiting');
      // Kept waiting this long at least, since the first turn holds the only room.
      await new Promise((resolve) => setTimeout(resolve, 20));
      held.shift()?.();
      await waitFor(() => held.length === 1, { message: 'the second turn at the model' });
      held.shift()?.();
      await waitFor(() => threads.every((threadTs) => threadReplies(h, threadTs).some((message) => message.text?.includes('The pods are fine.'))), { message: 'both answers' });
      await h.settled();

      const after = await metricsOf(h);
      expect(seriesValue(after, 'countersign_turns_running')).toBe(0);
      expect(seriesValue(after, 'countersign_turns_waiting')).toBe(0);
      expect(seriesValue(after, 'countersign_turn_admission_wait_seconds_count')).toBe(2);
      // The first started at once; the second waited more than 10 ms for the first to finish.
      expect(seriesValue(after, 'countersign_turn_admission_wait_seconds_bucket{le="0.001"}')).toBe(1);
      expect(seriesValue(after, 'countersign_turn_admission_wait_seconds_bucket{le="0.01"}')).toBe(1);
    } finally {
      // A failed expectation must not leave turns stuck at the model for the teardown to wait on.
      holding = false;
      for (const release of held.splice(0)) release();
    }
  });

  it('counts Redis connection errors while Redis cannot be reached, from the store the bot builds itself', async () => {
    const environment = parseEnvironment({
      SLACK_BOT_TOKEN: 'xoxb-test-token',
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SLACK_BOT_USER_ID: BOT_USER_ID,
      SLACK_BOT_ID: 'BBOT0001',
      OPENAI_API_KEY: 'sk-test',
      // Port 1 refuses connections.
      REDIS_URL: 'redis://127.0.0.1:1',
      METRICS_PORT: '9464',
    });
    const bot = await createBot({ environment, config: parseConfigFile('instructions: test', 'test.yml'), logger: pino({ level: 'silent' }) });
    try {
      const { metricsPort } = await bot.start({ port: 0, host: '127.0.0.1', metricsPort: 0, metricsHost: '127.0.0.1' });
      const connectionErrors = await waitFor(
        async () => seriesValue(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text(), 'countersign_redis_errors_total{kind="connection"}'),
        { message: 'a Redis connection error counted' },
      );
      expect(connectionErrors).toBeGreaterThan(0);
    } finally {
      await bot.stop();
    }
  });

  it('starts no more commands at once than COUNTERSIGN_MAX_RUNNING_COMMANDS, and shows the rest waiting', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'countersign-commands-'));
    const log = join(directory, 'log');
    const release = join(directory, 'release');
    writeFileSync(log, '');
    const configYaml = `
instructions: You are a test ops bot.
tools:
  - name: hold
    description: Holds until released
    command: ${JSON.stringify([process.execPath, HOLD_UNTIL_RELEASED, log, release, '{name}'])}
    parameters:
      name: { type: string, enum: [first, second] }
    approval: never
`;
    const h = await harness({ configYaml, environment: { COUNTERSIGN_MAX_RUNNING_COMMANDS: '1' } });
    h.openai.enqueue({ toolCalls: [{ name: 'hold', arguments: { name: 'first' } }] }, { toolCalls: [{ name: 'hold', arguments: { name: 'second' } }] }, { text: 'Done.' }, { text: 'Done.' });
    const threads = [nextTs(), nextTs()];
    for (const threadTs of threads) await h.mention({ user: 'UALICE', text: 'hold on', ts: threadTs });
    try {
      // Both turns called the tool: one command runs, the other waits for it.
      await scrapeWhen(h, { countersign_commands_running: 1, countersign_commands_waiting: 1 }, 'one command running and one waiting');
    } finally {
      // Let the commands go even when the wait failed, so none is left holding.
      appendFileSync(release, 'go');
    }
    for (const threadTs of threads) await waitFor(() => threadReplies(h, threadTs).some((message) => message.text?.includes('Done.')), { message: 'the answer' });
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(4);
    // The second started only after the first had ended.
    expect(lines[1]).toMatch(/ ended$/);
    expect(lines[2]).toMatch(/ started$/);
    const after = await metricsOf(h);
    expect([seriesValue(after, 'countersign_commands_running'), seriesValue(after, 'countersign_commands_waiting')]).toEqual([0, 0]);
  });
});
