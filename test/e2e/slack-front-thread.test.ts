import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mentionAndApprove, mentionBot, pairEnvironment, pairReplies, usePairWorld } from './bot-pair.js';
import { childrenOf, freePort, niceOf, nicesOfThreadsBesideMain, startChildBot, stopChildBot } from './child-bot.js';
import { readInvocations, recordingToolsYaml, waitFor } from './harness.js';

/**
 * COUNTERSIGN_SLACK_FRONT=thread: the process serves Slack's HTTP requests on one thread (verify,
 * ack, hand over) and runs the bot on another. Seen from Slack it is the same bot.
 */
const world = usePairWorld();

/** The model asks for a restart, then answers `text`: a responder, so a test that fails leaves nothing queued for the next. */
function answerWithARestart(text: string): void {
  let requests = 0;
  world.openai.setResponder(() => (requests++ === 0 ? { toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] } : { text }));
}

describe('a bot whose Slack requests are served by a front thread', () => {
  it('runs a mention, a card, an approval and the answer, the approved call once, and stops cleanly', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'countersign-front-'));
    const logFile = join(directory, 'invocations.log');
    const configPath = join(directory, 'countersign.yml');
    writeFileSync(configPath, recordingToolsYaml(logFile));
    const port = await freePort();
    const metricsPort = await freePort();
    const bot = startChildBot(pairEnvironment({ ...world, configPath, port, extra: { COUNTERSIGN_SLACK_FRONT: 'thread', METRICS_PORT: String(metricsPort), METRICS_HOST: '127.0.0.1' } }), {
      mainJs: world.mainJs,
    });
    try {
      await waitFor(() => bot.output().includes('countersign listening'), { timeoutMs: 30_000, message: `start-up; output so far:\n${bot.output()}` });
      expect(bot.output()).toContain('"front":"thread"');
      expect(bot.output()).toContain(`"metrics":"METRICS_PORT ${metricsPort}"`);
      const base = `http://127.0.0.1:${port}`;
      const metricsBase = `http://127.0.0.1:${metricsPort}`;
      for (const url of [base, metricsBase]) expect(await (await fetch(`${url}/healthz`)).json()).toMatchObject({ status: 'ok', store: 'redis' });
      // The metrics are on their own port, not on the one Slack (and so the internet) reaches.
      expect((await fetch(`${metricsBase}/metrics`)).headers.get('content-type')).toContain('text/plain');
      expect((await fetch(`${base}/metrics`)).status).toBe(404);

      world.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: 'Restarted through the front.' });
      const threadTs = '1800400001.000100';
      await mentionAndApprove(world.slack, `${base}/slack/events`, threadTs);
      await waitFor(() => pairReplies(world.slack, threadTs).some((message) => message.text === 'Restarted through the front.'), { timeoutMs: 15_000, message: 'the answer' });
      expect(readInvocations(logFile)).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'prod']]);
      // The bot thread's log lines reach the process's output too.
      expect(bot.output()).toContain('resuming turn');
      // Turns run below the front in CPU priority (nice 10 by default), and so does the command
      // spawner the bot thread started; the front's thread keeps the process's priority.
      const pid = bot.child.pid as number;
      const botThreadId = Number(/"event":"turn-thread-priority","nice":10,"threadId":(\d+)/.exec(bot.output())?.[1]);
      expect(niceOf(`/proc/${pid}/task/${botThreadId}/stat`)).toBe(10);
      expect(niceOf(`/proc/${pid}/task/${pid}/stat`)).toBe(0);
      expect(childrenOf(pid).map((child) => niceOf(`/proc/${child}/stat`))).toEqual([10]);
      // So does every other thread of the process, V8's and libuv's helpers included (most of their
      // work is the turns' garbage): only the front stays at 0.
      const others = nicesOfThreadsBesideMain(pid);
      expect(others.length).toBeGreaterThan(4);
      expect(new Set(others)).toEqual(new Set([10]));
    } finally {
      expect(await stopChildBot(bot)).toBe(0);
    }
  }, 90_000);

  it('runs more turns at once than the cap of a process that serves Slack on its own loop: behind the front, CPU is the limit', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'countersign-front-'));
    const configPath = join(directory, 'countersign.yml');
    writeFileSync(configPath, recordingToolsYaml(join(directory, 'invocations.log')));
    const port = await freePort();
    // The model holds every call until as many as the test sent are in flight at once: with a
    // small constant cap (8, the inline default) the rest would wait for those to finish, forever here.
    const turns = 12;
    let inFlight = 0;
    const releases: Array<() => void> = [];
    world.openai.setResponder(async () => {
      inFlight += 1;
      await new Promise<void>((resolve) => releases.push(resolve));
      return { text: 'Answered while the others waited.' };
    });
    const bot = startChildBot(pairEnvironment({ ...world, configPath, port }), { mainJs: world.mainJs });
    try {
      await waitFor(() => bot.output().includes('countersign listening'), { timeoutMs: 30_000, message: `start-up; output so far:\n${bot.output()}` });
      const threads = Array.from({ length: turns }, (_, index) => `18004002${String(index).padStart(2, '0')}.000100`);
      await Promise.all(threads.map((threadTs) => mentionBot(`http://127.0.0.1:${port}/slack/events`, threadTs, 'how are the pods?')));
      await waitFor(() => inFlight >= turns, { timeoutMs: 30_000, message: `${turns} model calls at once` }).catch((error: Error) => {
        throw new Error(`${error.message}: ${inFlight} came while the first ones were held`);
      });
      for (const release of releases.splice(0)) release();
      await waitFor(() => threads.every((threadTs) => pairReplies(world.slack, threadTs).some((message) => message.text === 'Answered while the others waited.')), {
        timeoutMs: 30_000,
        message: 'every answer',
      });
    } finally {
      world.openai.setResponder(undefined);
      for (const release of releases.splice(0)) release();
      expect(await stopChildBot(bot)).toBe(0);
    }
  }, 120_000);

  it('logs a stray exception or unhandled rejection in the bot thread and keeps serving, as a process without a front does', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'countersign-front-'));
    const logFile = join(directory, 'invocations.log');
    const configPath = join(directory, 'countersign.yml');
    writeFileSync(configPath, recordingToolsYaml(logFile));
    const port = await freePort();
    const bot = startChildBot(pairEnvironment({ ...world, configPath, port, extra: { COUNTERSIGN_THROW_AT: 'after-decision' } }), { mainJs: world.mainJs });
    try {
      await waitFor(() => bot.output().includes('countersign listening'), { timeoutMs: 30_000, message: `start-up; output so far:\n${bot.output()}` });
      answerWithARestart('Restarted after the stray errors.');
      const threadTs = '1800400301.000100';
      await mentionAndApprove(world.slack, `http://127.0.0.1:${port}/slack/events`, threadTs);
      await waitFor(() => pairReplies(world.slack, threadTs).some((message) => message.text === 'Restarted after the stray errors.') || bot.child.exitCode !== null, {
        timeoutMs: 15_000,
        message: 'the answer',
      });
      await waitFor(() => bot.output().includes('"event":"unhandled-rejection"') && bot.output().includes('"event":"uncaught-exception"'), { timeoutMs: 10_000, message: `both logged; output:\n${bot.output()}` });
      expect(bot.output()).not.toContain('bot-thread-failed');
      expect(bot.child.exitCode).toBeNull();
      expect(bot.output()).toContain('stray exception at after-decision');
      expect(bot.output()).toContain('stray rejection at after-decision');
      expect(readInvocations(logFile)).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'prod']]);
      // Still serving: the front's health check is answered by the bot's thread.
      expect(await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()).toMatchObject({ status: 'ok' });
    } finally {
      world.openai.setResponder(undefined);
      expect(await stopChildBot(bot), bot.output()).toBe(0);
    }
  }, 90_000);

  it('exits 1, saying why, when the bot thread ends: the front does not go on acking work no one handles', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'countersign-front-'));
    const configPath = join(directory, 'countersign.yml');
    writeFileSync(configPath, recordingToolsYaml(join(directory, 'invocations.log')));
    const port = await freePort();
    const bot = startChildBot(pairEnvironment({ ...world, configPath, port, extra: { COUNTERSIGN_END_THREAD_AT: 'after-decision' } }), { mainJs: world.mainJs });
    try {
      await waitFor(() => bot.output().includes('countersign listening'), { timeoutMs: 30_000, message: `start-up; output so far:\n${bot.output()}` });
      answerWithARestart('Never answered.');
      await mentionAndApprove(world.slack, `http://127.0.0.1:${port}/slack/events`, '1800400302.000100');
      expect(await bot.exited).toBe(1);
      expect(bot.output()).toMatch(/"event":"bot-thread-failed".*the bot thread exited with code 3/);
    } finally {
      world.openai.setResponder(undefined);
      await stopChildBot(bot);
    }
  }, 90_000);

  it('exits 1 naming the failure when the bot thread fails to start after its logger is up (METRICS_PORT taken), rather than wait for it forever', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'countersign-front-'));
    const configPath = join(directory, 'countersign.yml');
    writeFileSync(configPath, recordingToolsYaml(join(directory, 'invocations.log')));
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const metricsPort = (taken.address() as AddressInfo).port;
    const bot = startChildBot(pairEnvironment({ ...world, configPath, port: await freePort(), extra: { METRICS_PORT: String(metricsPort), METRICS_HOST: '127.0.0.1' } }), { mainJs: world.mainJs });
    try {
      const exited = await Promise.race([bot.exited, new Promise((resolve) => setTimeout(() => resolve('still running after 30 s'), 30_000))]);
      expect(exited, bot.output()).toBe(1);
      expect(bot.output()).toContain('countersign failed to start');
      expect(bot.output()).toContain('EADDRINUSE');
    } finally {
      await stopChildBot(bot);
      await new Promise((resolve) => taken.close(resolve));
    }
  }, 60_000);

  it('refuses the front thread with Socket Mode, naming the variable', async () => {
    const bot = startChildBot(
      { ...pairEnvironment({ ...world, configPath: '', port: await freePort(), extra: { COUNTERSIGN_SLACK_FRONT: 'thread', SLACK_APP_TOKEN: 'xapp-1' } }), COUNTERSIGN_CONFIG: '' },
      { mainJs: world.mainJs },
    );
    expect(await bot.exited).toBe(1);
    expect(bot.output()).toContain('COUNTERSIGN_SLACK_FRONT');
    expect(bot.output()).toContain('Socket Mode');
  }, 60_000);
});
