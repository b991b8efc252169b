import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai.js';
import { startFakeSlackApi, type FakeSlackApi } from '../helpers/fake-slack-api.js';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis-server.js';
import { appMentionEnvelope, blockActionsPayload, postSlackEvent, postSlackInteraction } from '../helpers/signed-request.js';
import { buildIsolatedBot, freePort, startChildBot, stopChildBot, type ChildBot } from './child-bot.js';
import { cardButtons, readInvocations, recordingToolsYaml, waitFor } from './harness.js';

/**
 * Two bot processes on one Redis behind one Slack app, the first with a test-only fault point
 * (`COUNTERSIGN_CRASH_AT` or `COUNTERSIGN_STALL_AT`, read by test/e2e/fault-preload.mjs): the crash and stall tests drive the first and
 * watch the second finish its work.
 */
export const PAIR_SECRET = 'bot-pair-secret';
export const PAIR_CHANNEL = 'C0PAIR001';
export const PAIR_TEAM = 'T0TEAM001';
export const PAIR_BOT_USER = 'UBOTPAIR';
/** Short, so the second process takes over within a second of the first one's lock lapsing. */
export const PAIR_LOCK_TTL_MS = 1_000;

export interface BotPair {
  doomed: ChildBot;
  survivor: ChildBot;
  doomedUrl: string;
  survivorUrl: string;
  /** Argv of every run of the recording tools, in order. */
  invocations: () => string[][];
  /** Lets a survivor started with `holdSurvivor` run. */
  releaseSurvivor: () => void;
  stop: () => Promise<void>;
}

/**
 * `holdSurvivor`: the second process is stopped (SIGSTOP) once it has started, until
 * `releaseSurvivor`, so the work under test is the first process's, whatever the machine's load:
 * with both running, a first process starved past its short lock has its thread taken over before
 * it reaches the fault point, and the scenario is not the one under test.
 */
export async function startBotPair(options: { mainJs: string; redis: RedisServerHandle; slack: FakeSlackApi; openai: FakeOpenAI; fault: Record<string, string>; holdSurvivor?: boolean }): Promise<BotPair> {
  const { slack, openai, redis } = options;
  const directory = mkdtempSync(join(tmpdir(), 'countersign-pair-'));
  const logFile = join(directory, 'invocations.log');
  const configPath = join(directory, 'countersign.yml');
  writeFileSync(configPath, recordingToolsYaml(logFile));
  const environment = (port: number, extra: Record<string, string> = {}) => pairEnvironment({ slack, openai, redis, configPath, port, extra });
  let ports: readonly [number, number];
  let doomed: ChildBot;
  let survivor: ChildBot;
  // A port freePort found free can be taken by another test's process before the bot binds it (two
  // suites side by side): then the pair starts again on other ports.
  for (let attempt = 1; ; attempt += 1) {
    ports = [await freePort(), await freePort()] as const;
    // The doomed process serves Slack inline: its fault hook then stops or kills it from the thread
    // that signals, at the exact point. From the bot thread behind a front, the signal reaches the
    // process through the main thread, a moment later on a loaded machine. The survivor has the
    // default front thread, so every pair has one of each.
    doomed = startChildBot(environment(ports[0], { COUNTERSIGN_SLACK_FRONT: 'inline', ...options.fault }), { mainJs: options.mainJs });
    survivor = startChildBot(environment(ports[1]), { mainJs: options.mainJs });
    const started = await Promise.all([doomed, survivor].map((bot) => untilListening(bot)));
    if (started.every((outcome) => outcome === 'listening')) break;
    await Promise.all([doomed, survivor].map((bot) => stopChildBot(bot)));
    if (attempt === 2 || !started.includes('port-taken')) {
      throw new Error(`a bot of the pair did not start:\n${[doomed, survivor].map((bot) => bot.output().slice(-2000)).join('\n---\n')}`);
    }
  }
  if (options.holdSurvivor) process.kill(survivor.child.pid!, 'SIGSTOP');
  return {
    doomed,
    survivor,
    doomedUrl: `http://127.0.0.1:${ports[0]}/slack/events`,
    survivorUrl: `http://127.0.0.1:${ports[1]}/slack/events`,
    invocations: () => readInvocations(logFile),
    releaseSurvivor() {
      process.kill(survivor.child.pid!, 'SIGCONT');
    },
    async stop() {
      // Both at once: each stops on its own (about a tenth of a second to a third each, which one after
      // the other added to every pair test).
      await Promise.all(
        [doomed, survivor].map((bot) => {
          // A stopped process cannot act on SIGTERM until it runs again.
          if (bot.child.pid !== undefined && bot.child.exitCode === null && bot.child.signalCode === null) process.kill(bot.child.pid, 'SIGCONT');
          return stopChildBot(bot);
        }),
      );
    },
  };
}

/** What a pair (or any bot of a test world) is started with: only what the README lists. */
export function pairEnvironment(options: { slack: FakeSlackApi; openai: FakeOpenAI; redis: RedisServerHandle; configPath: string; port: number; extra?: Record<string, string> }): Record<string, string> {
  const { slack, openai, redis, configPath, port, extra = {} } = options;
  return {
    SLACK_BOT_TOKEN: 'xoxb-pair',
    SLACK_SIGNING_SECRET: PAIR_SECRET,
    SLACK_API_URL: slack.url,
    SLACK_BOT_USER_ID: PAIR_BOT_USER,
    SLACK_BOT_ID: 'BBOTPAIR',
    OPENAI_API_KEY: 'sk-pair',
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API: 'chat',
    REDIS_URL: redis.url,
    COUNTERSIGN_CONFIG: configPath,
    COUNTERSIGN_LOCK_TTL_MS: String(PAIR_LOCK_TTL_MS),
    COUNTERSIGN_SWEEP_INTERVAL_MS: '100',
    LOG_LEVEL: 'info',
    PORT: String(port),
    ...extra,
  };
}

export function pairReplies(slack: FakeSlackApi, threadTs: string) {
  return slack.messages(PAIR_CHANNEL, threadTs).filter((message) => message.ts !== threadTs);
}

export function mentionBot(url: string, threadTs: string, text: string) {
  return postSlackEvent({ url, signingSecret: PAIR_SECRET, envelope: appMentionEnvelope({ user: 'UALICE', text: `<@${PAIR_BOT_USER}> ${text}`, channel: PAIR_CHANNEL, ts: threadTs, teamId: PAIR_TEAM }) });
}

/** Mentions the bot, waits for the card and clicks Approve on it, all through `url`. */
export async function mentionAndApprove(slack: FakeSlackApi, url: string, threadTs: string) {
  await mentionBot(url, threadTs, 'restart the worker');
  const card = await waitFor(() => pairReplies(slack, threadTs).find((message) => cardButtons(message.blocks).length > 0), { timeoutMs: 10_000, message: 'card' });
  const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
  await postSlackInteraction({
    url,
    signingSecret: PAIR_SECRET,
    payload: blockActionsPayload({ user: 'UBOB', channel: PAIR_CHANNEL, messageTs: card.ts, threadTs, actionId: approve.actionId, value: approve.value, teamId: PAIR_TEAM }),
  }).catch(() => undefined);
}

/** The last events a bot logged, in order, for a failure message. */
export function logEvents(bot: ChildBot): string {
  const events = bot.output().split('\n').flatMap((line) => /"event":"([^"]+)"|"msg":"([^"]+)"/.exec(line)?.slice(1, 3).filter(Boolean) ?? []);
  return events.slice(-15).join(' | ');
}

/** Resolves once the process is stopped (SIGSTOP), as `/proc/<pid>/stat` says. */
export async function waitUntilStopped(bot: ChildBot): Promise<void> {
  try {
    await waitFor(() => /^\d+ \(.*\) [Tt] /.test(readFileSync(`/proc/${bot.child.pid}/stat`, 'utf8')), { timeoutMs: 15_000, message: 'the process to stop at its stall point' });
  } catch (error) {
    // Which events it got through says why it never reached the point (fenced first, say).
    throw new Error(`${(error as Error).message}; its log: ${logEvents(bot)}`);
  }
}

export interface PairWorld {
  mainJs: string;
  redis: RedisServerHandle;
  slack: FakeSlackApi;
  openai: FakeOpenAI;
}

/** The Redis, fake Slack and fake OpenAI a test file's bot pairs share, started once per file. */
export function usePairWorld(): PairWorld {
  const world = {} as PairWorld;
  beforeAll(async () => {
    world.mainJs = buildIsolatedBot();
    world.redis = await startRedisServer();
    world.slack = await startFakeSlackApi({ botUserId: PAIR_BOT_USER, botId: 'BBOTPAIR', teamId: PAIR_TEAM });
    world.openai = await startFakeOpenAI();
  }, 120_000);
  afterAll(async () => {
    await world.slack?.close();
    await world.openai?.close();
    await world.redis?.stop();
  });
  return world;
}

/** Waits for the bot to listen; a bot that exits first says why (its port taken, or anything else). */
async function untilListening(bot: ChildBot): Promise<'listening' | 'port-taken' | 'exited'> {
  let exited = false;
  void bot.exited.then(() => {
    exited = true;
  });
  try {
    await waitFor(() => exited || bot.output().includes('countersign listening'), { timeoutMs: 30_000, message: 'start-up' });
  } catch (error) {
    throw new Error(`${(error as Error).message}; its output so far:\n${bot.output().slice(-2000)}`, { cause: error });
  }
  if (bot.output().includes('countersign listening')) return 'listening';
  return bot.output().includes('EADDRINUSE') ? 'port-taken' : 'exited';
}
