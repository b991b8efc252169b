import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { mentionBot, PAIR_CHANNEL, PAIR_SECRET, PAIR_TEAM, pairEnvironment, pairReplies, usePairWorld } from './bot-pair.js';
import { childrenOf, freePort, niceOf, nicesOfThreadsBesideMain, startChildBot, stopChildBot, type ChildBot } from './child-bot.js';
import { cardButtons, readInvocations, recordingToolsYaml, waitFor } from './harness.js';
import { createRedisKeys } from '../../src/store/redis-keys.js';
import { blockActionsPayload, postSlackInteraction } from '../helpers/signed-request.js';

/**
 * `COUNTERSIGN_ROLE=receiver` serves Slack and runs no turns; `COUNTERSIGN_ROLE=worker` runs the
 * turns the receivers hand off through Redis. The sweep for stalled work is set out of reach, so
 * only the hand-off can bring the work to the worker.
 */
const world = usePairWorld();
const NO_SWEEP = { COUNTERSIGN_SWEEP_INTERVAL_MS: '600000' };


describe('a receiver and a worker', () => {
  it('the receiver acks and hands the turn off; a worker started later runs it, and runs the approved call once', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'countersign-roles-'));
    const logFile = join(directory, 'invocations.log');
    const configPath = join(directory, 'countersign.yml');
    writeFileSync(configPath, recordingToolsYaml(logFile));
    const start = async (role: string) => {
      const port = await freePort();
      const bot = startChildBot(pairEnvironment({ ...world, configPath, port, extra: { ...NO_SWEEP, COUNTERSIGN_ROLE: role } }), { mainJs: world.mainJs });
      return { bot, port };
    };
    const bots: ChildBot[] = [];
    const redis = new Redis(world.redis.url);
    try {
      const receiver = await start('receiver');
      bots.push(receiver.bot);
      await waitFor(() => receiver.bot.output().includes('countersign listening'), { timeoutMs: 30_000, message: 'the receiver to listen' });
      const url = `http://127.0.0.1:${receiver.port}/slack/events`;

      world.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: 'Restarted by the worker.' });
      const asked = world.openai.requests.length;
      const threadTs = '1800300001.000100';
      const response = await mentionBot(url, threadTs, 'restart the worker');
      expect(response.status).toBe(200);
      // Handed off: offered to the workers in Redis, the model not asked by the receiver.
      const readyLists = createRedisKeys({ keyPrefix: 'countersign:' }).shards().map((shard) => shard.ready());
      await waitFor(async () => (await Promise.all(readyLists.map((list) => redis.lrange(list, 0, -1)))).flat().some((key) => key.endsWith(threadTs)), { timeoutMs: 10_000, message: 'the hand-off' });
      expect(world.openai.requests.length).toBe(asked);

      const worker = await start('worker');
      bots.push(worker.bot);
      await waitFor(() => worker.bot.output().includes('countersign worker running turns'), { timeoutMs: 30_000, message: 'the worker to start' });
      const card = await waitFor(() => pairReplies(world.slack, threadTs).find((message) => cardButtons(message.blocks).length > 0), { timeoutMs: 15_000, message: 'the card' });
      const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
      const click = await postSlackInteraction({
        url,
        signingSecret: PAIR_SECRET,
        payload: blockActionsPayload({ user: 'UBOB', channel: PAIR_CHANNEL, messageTs: card.ts, threadTs, actionId: approve.actionId, value: approve.value, teamId: PAIR_TEAM }),
      });
      expect(click.status).toBe(200);
      await waitFor(() => pairReplies(world.slack, threadTs).some((message) => message.text === 'Restarted by the worker.'), { timeoutMs: 15_000, message: 'the answer' });
      expect(readInvocations(logFile)).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'prod']]);
      // The worker's metrics count each of its two turns once, though each was a handed-off thread first.
      const workerMetrics = await waitFor(
        async () => {
          const text = await (await fetch(`http://127.0.0.1:${worker.port}/metrics`)).text();
          return /^countersign_turns_running 0$/m.test(text) ? text : undefined;
        },
        { timeoutMs: 10_000, message: "the worker's turns over" },
      );
      expect(/^countersign_turn_admission_wait_seconds_count (\d+)$/m.exec(workerMetrics)?.[1]).toBe('2');
      // Every turn ran in the worker: the card, the resumed turn.
      expect(worker.bot.output()).toContain('approval card posted');
      expect(worker.bot.output()).toContain('resuming turn');
      expect(receiver.bot.output()).not.toContain('approval card posted');
      expect(receiver.bot.output()).not.toContain('resuming turn');

      // Acks come first in CPU priority: the whole worker (its spawner too) runs at nice 10, and so does
      // the receiver's bot thread (decisions, card updates); the receiver's front thread, which acks, at 0.
      const workerPid = worker.bot.child.pid as number;
      expect(niceOf(`/proc/${workerPid}/stat`)).toBe(10);
      expect(childrenOf(workerPid).map((child) => niceOf(`/proc/${child}/stat`))).toEqual([10]);
      const receiverPid = receiver.bot.child.pid as number;
      const receiverBotThread = Number(/"event":"turn-thread-priority","nice":10,"threadId":(\d+)/.exec(receiver.bot.output())?.[1]);
      expect(niceOf(`/proc/${receiverPid}/task/${receiverBotThread}/stat`)).toBe(10);
      expect(niceOf(`/proc/${receiverPid}/task/${receiverPid}/stat`)).toBe(0);
      // Every other thread, in both (V8's and libuv's helpers started at 0 before any was lowered).
      for (const pid of [workerPid, receiverPid]) expect(new Set(nicesOfThreadsBesideMain(pid))).toEqual(new Set([10]));

      // A worker serves no Slack requests, only its health check.
      const workerBase = `http://127.0.0.1:${worker.port}`;
      expect((await fetch(`${workerBase}/healthz`)).status).toBe(200);
      expect((await fetch(`${workerBase}/slack/events`, { method: 'POST', body: '{}' })).status).toBe(404);
    } finally {
      redis.disconnect();
      for (const bot of bots) await stopChildBot(bot);
    }
  }, 90_000);
});
