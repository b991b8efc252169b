import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai.js';
import { startFakeSlackApi, type FakeSlackApi } from '../helpers/fake-slack-api.js';
import { appMentionEnvelope, blockActionsPayload, postSlackEvent, postSlackInteraction } from '../helpers/signed-request.js';
import { freePort, repositoryCheckout, startChildBot, stopChildBot } from './child-bot.js';
import { cardButtons, recordingToolsYaml, waitFor } from './harness.js';

/**
 * The real entry point as a child process, configured the way the README tells a newcomer to:
 * environment variables, a countersign.yml, and `npm start`.
 */
const SECRET = 'entry-point-signing-secret-SENTINEL';
const startBot = (environment: Record<string, string>) => startChildBot(environment);
const stopBot = stopChildBot;

/**
 * `npm start` with npm's prestart (the build) skipped, once the checkout has a build. The first test
 * starts the bot exactly as the README says, build included; the others are about what the started
 * process does, and a whole tsc run before each (seconds on a loaded machine) adds nothing to them.
 */
function startBuiltBot(environment: Record<string, string>) {
  if (!existsSync(join(repositoryCheckout(), 'dist/main.js'))) {
    const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: repositoryCheckout(), stdio: 'pipe' });
    if (!existsSync(join(repositoryCheckout(), 'dist/main.js'))) throw new Error(`building the checkout failed:\n${build.stdout}${build.stderr}`);
  }
  return startChildBot({ ...environment, npm_config_ignore_scripts: 'true' });
}

describe('the entry point, started as the README says', () => {
  let slack: FakeSlackApi;
  let openai: FakeOpenAI;
  let directory: string;

  beforeAll(async () => {
    slack = await startFakeSlackApi({ botUserId: 'UBOTENTRY', botId: 'BBOTENTRY', teamId: 'T0TEAM001' });
    openai = await startFakeOpenAI();
    directory = mkdtempSync(join(tmpdir(), 'countersign-entry-'));
  });
  afterAll(async () => {
    await slack.close();
    await openai.close();
  });
  /** What the README has a newcomer set for HTTP mode, pointed at the fakes and the test Redis. */
  const servingEnvironment = ({ port, configPath }: { port: number; configPath: string }) => ({
    SLACK_BOT_TOKEN: 'xoxb-entry-token',
    SLACK_SIGNING_SECRET: SECRET,
    SLACK_API_URL: slack.url,
    OPENAI_API_KEY: 'sk-entry',
    OPENAI_BASE_URL: openai.baseURL,
    REDIS_URL: inject('redisUrl'),
    COUNTERSIGN_CONFIG: configPath,
    PORT: String(port),
  });

  it('serves Slack over HTTP: health, a mention, a card, an approval and the answer', async () => {
    const port = await freePort();
    const logFile = join(directory, 'invocations.log');
    const configPath = join(directory, 'countersign.yml');
    writeFileSync(configPath, recordingToolsYaml(logFile));
    const bot = startBot({ ...servingEnvironment({ port, configPath }), OPENAI_API: 'chat' });
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitFor(() => bot.output().includes('countersign listening'), { timeoutMs: 60_000, message: `start-up; output so far:\n${bot.output()}` });
      // npm's prestart built the checkout (it holds no dist/ before the first start).
      expect(existsSync(join(repositoryCheckout(), 'dist/main.js'))).toBe(true);
      const health = await fetch(`${base}/healthz`);
      expect(health.status).toBe(200);

      openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'Worker restarted.' });
      const threadTs = '1800009999.000100';
      const mention = await postSlackEvent({
        url: `${base}/slack/events`,
        signingSecret: SECRET,
        envelope: appMentionEnvelope({ user: 'UALICE', text: '<@UBOTENTRY> restart the worker', channel: 'C0ENTRY01', ts: threadTs, teamId: 'T0TEAM001' }),
      });
      expect(mention.status).toBe(200);
      const card = await waitFor(() => slack.messages('C0ENTRY01', threadTs).find((message) => cardButtons(message.blocks).length > 0), {
        timeoutMs: 10_000,
        message: 'card',
      });
      const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
      await postSlackInteraction({
        url: `${base}/slack/events`,
        signingSecret: SECRET,
        payload: blockActionsPayload({ user: 'UBOB', channel: 'C0ENTRY01', messageTs: card.ts, threadTs, actionId: approve.actionId, value: approve.value, teamId: 'T0TEAM001' }),
      });
      await waitFor(() => slack.messages('C0ENTRY01', threadTs).some((message) => message.text === 'Worker restarted.'), { timeoutMs: 10_000, message: 'answer' });
      expect(readFileSync(logFile, 'utf8').trim().split('\n')).toHaveLength(1);
      expect(slack.callsTo('auth.test').length).toBeGreaterThanOrEqual(1);
      expect(bot.output()).not.toContain(SECRET);
      expect(bot.output()).not.toContain('xoxb-entry-token');
    } finally {
      await stopBot(bot);
    }
  }, 90_000);

  describe('when whatever reads its logs is gone (a log shipper that died), the next line written gets EPIPE', () => {
    /** A serving bot whose stdout the test closes once it listens; `provoke` makes some thread write a line. */
    async function exitAfterOutputBreaks(provoke: (port: number) => Promise<void>): Promise<void> {
      const port = await freePort();
      const configPath = join(directory, `output-breaks-${port}.yml`);
      writeFileSync(configPath, recordingToolsYaml(join(directory, 'unused.log')));
      const bot = startBuiltBot(servingEnvironment({ port, configPath }));
      try {
        // The test Redis keeps RDB snapshots only, so the bot also warns `redis-not-durable` once Redis
        // answers, which may come after "listening": wait for it, or that line is the one to get EPIPE.
        await waitFor(() => bot.output().includes('countersign listening') && bot.output().includes('redis-not-durable'), {
          timeoutMs: 60_000,
          message: `start-up; output so far:\n${bot.output()}`,
        });
        bot.child.stdout?.destroy();
        await provoke(port);
        const code = await Promise.race([bot.exited, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 60_000))]);
        expect(code, `output (stderr after stdout closed):\n${bot.output()}`).toBe(1);
        // Said once, on stderr, however many threads saw it.
        expect(bot.output().split('writing its log output failed (EPIPE); stopping')).toHaveLength(2);
      } finally {
        await stopBot(bot);
      }
    }

    it('the front writes first: the process stops (exit 1) instead of looping on the write error', async () => {
      // Before, the front logged the write error to the same stdout, forever, at full CPU.
      await exitAfterOutputBreaks(async (port) => {
        const unsigned = await fetch(`http://127.0.0.1:${port}/slack/events`, { method: 'POST', body: '{}' });
        expect(unsigned.status).toBe(401);
      });
    }, 120_000);

    it('only the bot thread writes: the process stops the same way instead of running on without logs', async () => {
      // A signed mention: the front logs nothing; the model refuses the request (a 400, which the AI
      // SDK does not retry), so the turn fails and the bot's thread logs it, to its own handle on fd 1.
      // pino drops such a destination without a word; before, the process ran on with its logs gone.
      await exitAfterOutputBreaks(async (port) => {
        openai.enqueue({ error: { status: 400, message: 'fake-openai: refused' } });
        const mention = await postSlackEvent({
          url: `http://127.0.0.1:${port}/slack/events`,
          signingSecret: SECRET,
          envelope: appMentionEnvelope({ user: 'UALICE', text: '<@UBOTENTRY> hello', channel: 'C0ENTRY02', ts: '1800009998.000100', teamId: 'T0TEAM001' }),
        });
        expect(mention.status).toBe(200);
      });
    }, 120_000);
  });

  it('refuses to start on invalid configuration, naming every field and no secret', async () => {
    const bot = startBuiltBot({ SLACK_SIGNING_SECRET: SECRET, OPENAI_API_KEY: 'sk-entry', OPENAI_API: 'soap', PORT: '70000' });
    const code = await bot.exited;
    expect(code).toBe(1);
    expect(bot.output()).toContain('SLACK_BOT_TOKEN');
    expect(bot.output()).toContain('OPENAI_API');
    expect(bot.output()).toContain('PORT');
    expect(bot.output()).not.toContain(SECRET);
  }, 90_000);

  it('warns that state is not durable when REDIS_URL is unset', async () => {
    const port = await freePort();
    const bot = startBuiltBot({
      SLACK_BOT_TOKEN: 'xoxb-entry-token',
      SLACK_SIGNING_SECRET: SECRET,
      SLACK_API_URL: slack.url,
      OPENAI_API_KEY: 'sk-entry',
      COUNTERSIGN_CONFIG: join(directory, 'missing-is-not-ok.yml'),
      PORT: String(port),
    });
    const code = await bot.exited;
    // A config path that does not exist is an error too: a typo must not silently drop every tool.
    expect(code).toBe(1);
    expect(bot.output()).toContain('missing-is-not-ok.yml');

    const memoryBot = startBuiltBot({
      SLACK_BOT_TOKEN: 'xoxb-entry-token',
      SLACK_SIGNING_SECRET: SECRET,
      SLACK_API_URL: slack.url,
      OPENAI_API_KEY: 'sk-entry',
      PORT: String(port),
    });
    try {
      await waitFor(() => memoryBot.output().includes('countersign listening'), { timeoutMs: 60_000, message: 'start-up' });
      expect(memoryBot.output()).toContain('REDIS_URL is not set');
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(await health.json()).toMatchObject({ status: 'ok', store: 'memory' });
    } finally {
      await stopBot(memoryBot);
    }
  }, 120_000);
});
