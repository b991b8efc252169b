import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationOf, startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai.js';
import { startFakeSlackApi, type FakeSlackApi } from '../helpers/fake-slack-api.js';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis-server.js';
import { appMentionEnvelope, blockActionsPayload, postSlackEvent, postSlackInteraction } from '../helpers/signed-request.js';
import { buildIsolatedBot, freePort, startChildBot, stopChildBot, type ChildBot } from './child-bot.js';
import { cardButtons, readInvocations, recordingToolsYaml, waitFor } from './harness.js';

/**
 * Two bot processes share one Redis behind one Slack app. One is killed with SIGKILL at a named
 * point (a test-only hook); the other must finish the turn: no decision lost, no approved call run
 * twice, the answer posted once.
 */
const SECRET = 'crash-recovery-secret';
const CHANNEL = 'C0CRASH01';
const TEAM = 'T0TEAM001';

let mainJs: string;
let redis: RedisServerHandle;
let slack: FakeSlackApi;
let openai: FakeOpenAI;

beforeAll(async () => {
  mainJs = buildIsolatedBot();
  redis = await startRedisServer();
  slack = await startFakeSlackApi({ botUserId: 'UBOTCRASH', botId: 'BBOTCRASH', teamId: TEAM });
  openai = await startFakeOpenAI();
}, 120_000);
afterAll(async () => {
  await slack?.close();
  await openai?.close();
  await redis?.stop();
});

async function startPair(crashAt: string) {
  const directory = mkdtempSync(join(tmpdir(), 'countersign-crash-'));
  const logFile = join(directory, 'invocations.log');
  const configPath = join(directory, 'countersign.yml');
  writeFileSync(configPath, recordingToolsYaml(logFile));
  const environment = (port: number, extra: Record<string, string> = {}) => ({
    SLACK_BOT_TOKEN: 'xoxb-crash',
    SLACK_SIGNING_SECRET: SECRET,
    SLACK_API_URL: slack.url,
    SLACK_BOT_USER_ID: 'UBOTCRASH',
    SLACK_BOT_ID: 'BBOTCRASH',
    OPENAI_API_KEY: 'sk-crash',
    OPENAI_BASE_URL: openai.baseURL,
    OPENAI_API: 'chat',
    REDIS_URL: redis.url,
    COUNTERSIGN_CONFIG: configPath,
    COUNTERSIGN_LOCK_TTL_MS: '400',
    COUNTERSIGN_SWEEP_INTERVAL_MS: '100',
    LOG_LEVEL: 'info',
    PORT: String(port),
    ...extra,
  });
  const ports = [await freePort(), await freePort()] as const;
  const doomed = startChildBot(environment(ports[0], { COUNTERSIGN_CRASH_AT: crashAt }), { mainJs });
  const survivor = startChildBot(environment(ports[1]), { mainJs });
  for (const bot of [doomed, survivor]) await waitFor(() => bot.output().includes('countersign listening'), { timeoutMs: 30_000, message: 'start-up' });
  const invocations = () => readInvocations(logFile);
  return { doomed, survivor, doomedUrl: `http://127.0.0.1:${ports[0]}/slack/events`, invocations };
}

const replies = (threadTs: string) => slack.messages(CHANNEL, threadTs).filter((message) => message.ts !== threadTs);

function mention(url: string, threadTs: string, text: string) {
  return postSlackEvent({ url, signingSecret: SECRET, envelope: appMentionEnvelope({ user: 'UALICE', text: `<@UBOTCRASH> ${text}`, channel: CHANNEL, ts: threadTs, teamId: TEAM }) });
}

async function mentionAndApprove(url: string, threadTs: string) {
  await mention(url, threadTs, 'restart the worker');
  const card = await waitFor(() => replies(threadTs).find((message) => cardButtons(message.blocks).length > 0), { timeoutMs: 10_000, message: 'card' });
  const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
  await postSlackInteraction({
    url,
    signingSecret: SECRET,
    payload: blockActionsPayload({ user: 'UBOB', channel: CHANNEL, messageTs: card.ts, threadTs, actionId: approve.actionId, value: approve.value, teamId: TEAM }),
  }).catch(() => undefined);
}

async function stopAll(...bots: ChildBot[]) {
  for (const bot of bots) await stopChildBot(bot);
}

describe('a bot process killed mid-turn', () => {
  it('killed while the approved command runs: the other process finishes the turn and does not run it again', async () => {
    const pair = await startPair('after-tool');
    try {
      openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: 'Checked: the restart went through.' });
      const threadTs = '1800100001.000100';
      await mentionAndApprove(pair.doomedUrl, threadTs);
      expect(await pair.doomed.exited).toBeNull();
      await waitFor(() => replies(threadTs).some((message) => message.text === 'Checked: the restart went through.'), { timeoutMs: 15_000, message: 'answer from the survivor' });
      expect(pair.invocations()).toHaveLength(1);
      const told = conversationOf(openai.requests.at(-1)!).find((message) => message.role === 'tool')?.text ?? '';
      expect(told).toContain('Interrupted: the bot process stopped while this call was running');
    } finally {
      await stopAll(pair.doomed, pair.survivor);
    }
  }, 60_000);

  it('killed right after recording the decision: the decision is kept and the other process runs the call once', async () => {
    const pair = await startPair('after-decision');
    try {
      openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } }] }, { text: 'Restarted api.' });
      const threadTs = '1800100002.000100';
      await mentionAndApprove(pair.doomedUrl, threadTs);
      expect(await pair.doomed.exited).toBeNull();
      await waitFor(() => replies(threadTs).some((message) => message.text === 'Restarted api.'), { timeoutMs: 15_000, message: 'answer from the survivor' });
      expect(pair.invocations()).toEqual([['rollout', 'restart', 'deployment/api', '-n', 'prod']]);
    } finally {
      await stopAll(pair.doomed, pair.survivor);
    }
  }, 60_000);

  it('killed while the answer is being written: the other process writes it again into the same message', async () => {
    const pair = await startPair('mid-answer');
    try {
      const answer = 'The queue drained and every worker is healthy again after the restart.';
      openai.setResponder(() => ({ text: answer, deltaDelayMs: 40 }));
      const threadTs = '1800100004.000100';
      await mention(pair.doomedUrl, threadTs, 'how is the queue?');
      expect(await pair.doomed.exited).toBeNull();
      await waitFor(() => replies(threadTs).some((message) => message.text === answer), { timeoutMs: 15_000, message: 'answer from the survivor' });
      // The half answer the dead process left was rewritten, not left above the whole one.
      expect(replies(threadTs)).toHaveLength(1);
    } finally {
      openai.setResponder(undefined);
      await stopAll(pair.doomed, pair.survivor);
    }
  }, 60_000);

  it('killed before posting the answer: the other process posts it, without asking the model again', async () => {
    const pair = await startPair('before-answer');
    try {
      const before = openai.requests.length;
      openai.enqueue({ text: 'The answer that was almost lost.' });
      const threadTs = '1800100003.000100';
      await mention(pair.doomedUrl, threadTs, 'status?');
      expect(await pair.doomed.exited).toBeNull();
      await waitFor(() => replies(threadTs).some((message) => message.text === 'The answer that was almost lost.'), { timeoutMs: 15_000, message: 'answer' });
      expect(openai.requests.length - before).toBe(1);
      expect(replies(threadTs).filter((message) => message.text === 'The answer that was almost lost.')).toHaveLength(1);
    } finally {
      await stopAll(pair.doomed, pair.survivor);
    }
  }, 60_000);
});
