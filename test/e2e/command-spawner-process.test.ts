import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { hangingCommand, isAlive, literalArgvTemplate, parentOf, readPids } from '../../src/tools/command/processes.test-support.js';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai.js';
import { startFakeSlackApi, type FakeSlackApi } from '../helpers/fake-slack-api.js';
import { appMentionEnvelope, postSlackEvent } from '../helpers/signed-request.js';
import { buildIsolatedBot, freePort, startChildBot, stopChildBot } from './child-bot.js';
import { waitFor } from './harness.js';

/**
 * The built bot as a real process, killed with SIGKILL while its spawner runs a command: nothing
 * of it may survive (the spawner sees its IPC channel close, stops the command and exits).
 * Linux only: the spawner is found as the command's parent in /proc.
 */
const SECRET = 'spawner-process-signing-secret';

describe.skipIf(process.platform !== 'linux')('a bot process killed while its spawner runs a command', () => {
  let slack: FakeSlackApi;
  let openai: FakeOpenAI;
  let mainJs: string;

  beforeAll(async () => {
    slack = await startFakeSlackApi({ botUserId: 'UBOTSPAWN', botId: 'BBOTSPAWN', teamId: 'T0TEAM001' });
    openai = await startFakeOpenAI();
    mainJs = buildIsolatedBot();
  }, 120_000);
  afterAll(async () => {
    await slack?.close();
    await openai?.close();
  });

  it('leaves no spawner and no command behind', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'countersign-spawner-process-'));
    const pidFile = join(directory, 'pids');
    const configPath = join(directory, 'countersign.yml');
    const command = literalArgvTemplate(hangingCommand(pidFile));
    writeFileSync(configPath, `tools:\n  - name: stuck_job\n    description: A job that hangs\n    command: ${JSON.stringify(command)}\n    timeoutSeconds: 60\n    approval: never\n`);
    const port = await freePort();
    const bot = startChildBot(
      {
        SLACK_BOT_TOKEN: 'xoxb-spawner-token',
        SLACK_SIGNING_SECRET: SECRET,
        SLACK_API_URL: slack.url,
        OPENAI_API_KEY: 'sk-spawner',
        OPENAI_BASE_URL: openai.baseURL,
        OPENAI_API: 'chat',
        REDIS_URL: inject('redisUrl'),
        COUNTERSIGN_CONFIG: configPath,
        PORT: String(port),
      },
      { mainJs },
    );
    try {
      await waitFor(() => bot.output().includes('countersign listening'), { timeoutMs: 60_000, message: `start-up; output so far:\n${bot.output()}` });
      openai.enqueue({ toolCalls: [{ name: 'stuck_job', arguments: {} }] }, { text: 'never sent' });
      await postSlackEvent({
        url: `http://127.0.0.1:${port}/slack/events`,
        signingSecret: SECRET,
        envelope: appMentionEnvelope({ user: 'UALICE', text: '<@UBOTSPAWN> run the job', channel: 'C0SPAWN01', ts: '1800019999.000100', teamId: 'T0TEAM001' }),
      });
      const commandPids = await vi.waitFor(() => readPids(pidFile) ?? Promise.reject(new Error('the command has not started')), { timeout: 15_000, interval: 20 });
      const spawnerPid = parentOf(commandPids[0]!);
      expect(spawnerPid).not.toBe(bot.child.pid);

      process.kill(bot.child.pid!, 'SIGKILL');

      await vi.waitFor(() => expect([spawnerPid, ...commandPids].filter(isAlive)).toEqual([]), { timeout: 10_000, interval: 20 });
    } finally {
      await stopChildBot(bot);
    }
  }, 90_000);
});
