import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createRedisKeys } from '../../src/store/redis-keys.js';
import { conversationOf } from '../helpers/fake-openai.js';
import { blockActionsPayload, postSlackInteraction } from '../helpers/signed-request.js';
import { logEvents, mentionBot, PAIR_CHANNEL, PAIR_SECRET, PAIR_TEAM, pairReplies, startBotPair, usePairWorld } from './bot-pair.js';
import { cardButtons, waitFor } from './harness.js';

/**
 * Second case: the resumed turn fails (the model refuses the request); its failure is saved
 * (`thread.failedTurn`) and the process stops before the notice with Try again reaches Slack.
 * `recoverInterruptedResume` returns at once for a thread with a failure ("the thread shows its
 * failure"), but it never showed: the thread stays silent with no notice and no Try again. (A
 * retried turn keeps `unpostedNotice` for exactly this; a resumed one does not.)
 *
 * A resumed turn ran its approved call, and the model asked for another call that needs approval:
 * the new step is saved (thread.pendingStepId = the new step) and the process stops before its
 * card reaches Slack. The resume item of the first step comes back to another process:
 * `recoverInterruptedResume` (resume-step.ts) sees a thread that no longer ends with the first
 * step's decisions and returns. Unlike continueInterrupted (handle-message.ts) and showLeftOver
 * (retry-failed-turn.ts), it never posts the unposted card: the new step waits on a card nobody
 * can see, and the thread goes silent.
 */
const world = usePairWorld();
const replies = (threadTs: string) => pairReplies(world.slack, threadTs);

describe('a process killed after opening the next step of a resumed turn, before its card', () => {
  it('the other process posts the card of the new step', async () => {
    const pair = await startBotPair({ ...world, fault: {}, holdSurvivor: true });
    try {
      world.openai.setResponder((request) => {
        const conversation = conversationOf(request);
        const since = conversation.slice(conversation.findLastIndex((entry) => entry.role === 'user') + 1);
        const results = since.filter((entry) => entry.role === 'tool').length;
        if (results === 0) return { toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] };
        if (results === 1) return { toolCalls: [{ name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } }] };
        return { text: 'Both restarted.' };
      });
      const threadTs = '1800500001.000100';
      await mentionBot(pair.doomedUrl, threadTs, 'restart the worker');
      const card = await waitFor(() => replies(threadTs).find((message) => cardButtons(message.blocks).length > 0), { timeoutMs: 10_000, message: 'card' });
      // The next post is the second step's card: the process dies while it is on its way, and Slack never takes it.
      const hold = world.slack.holdNext('chat.postMessage');
      const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
      await postSlackInteraction({
        url: pair.doomedUrl,
        signingSecret: PAIR_SECRET,
        payload: blockActionsPayload({ user: 'UBOB', channel: PAIR_CHANNEL, messageTs: card.ts, threadTs, actionId: approve.actionId, value: approve.value, teamId: PAIR_TEAM }),
      }).catch(() => undefined);
      await hold.received;
      process.kill(pair.doomed.child.pid!, 'SIGKILL');
      await pair.doomed.exited;
      world.slack.failNext('chat.postMessage', { status: 500 });
      hold.release();
      expect(pair.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'prod']]);

      // Barrier: the dead process's resume item is in flight; once the survivor took it over and
      // finished it, nothing is queued or in flight any more.
      const client = new Redis(world.redis.url);
      try {
        const busySets = createRedisKeys({ keyPrefix: 'countersign:' }).shards().map((shard) => shard.busy());
        expect((await Promise.all(busySets.map((set) => client.zrange(set, '0', '-1')))).flat().some((key) => key.endsWith(threadTs))).toBe(true);
        pair.releaseSurvivor();
        await waitFor(async () => (await Promise.all(busySets.map((set) => client.zcard(set)))).every((count) => count === 0), { timeoutMs: 20_000, message: 'no thread with work left' });
      } finally {
        client.disconnect();
      }
      const cards = replies(threadTs).filter((message) => cardButtons(message.blocks).some((button) => button.actionId === 'countersign_approve'));
      const texts = replies(threadTs).map((message) => message.text);
      expect(cards, `no card for the second restart; thread: ${JSON.stringify(texts)}; survivor: ${logEvents(pair.survivor)}`).toHaveLength(1);
    } finally {
      world.openai.setResponder(undefined);
      await pair.stop();
    }
  }, 90_000);
});

describe('a process killed after saving the failure of a resumed turn, before its notice', () => {
  it('the other process posts the failure notice with Try again', async () => {
    const pair = await startBotPair({ ...world, fault: {}, holdSurvivor: true });
    try {
      world.openai.setResponder((request) => {
        const conversation = conversationOf(request);
        const since = conversation.slice(conversation.findLastIndex((entry) => entry.role === 'user') + 1);
        const results = since.filter((entry) => entry.role === 'tool').length;
        if (results === 0) return { toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] };
        return { error: { status: 400, message: 'model said no' } };
      });
      const threadTs = '1800500002.000100';
      await mentionBot(pair.doomedUrl, threadTs, 'restart the worker');
      const card = await waitFor(() => replies(threadTs).find((message) => cardButtons(message.blocks).length > 0), { timeoutMs: 10_000, message: 'card' });
      // The next post is the failure notice of the resumed turn: the process dies while it is on its way, and Slack never takes it.
      const hold = world.slack.holdNext('chat.postMessage');
      const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
      await postSlackInteraction({
        url: pair.doomedUrl,
        signingSecret: PAIR_SECRET,
        payload: blockActionsPayload({ user: 'UBOB', channel: PAIR_CHANNEL, messageTs: card.ts, threadTs, actionId: approve.actionId, value: approve.value, teamId: PAIR_TEAM }),
      }).catch(() => undefined);
      await hold.received;
      process.kill(pair.doomed.child.pid!, 'SIGKILL');
      await pair.doomed.exited;
      world.slack.failNext('chat.postMessage', { status: 500 });
      hold.release();
      expect(pair.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'prod']]);

      // Barrier: the dead process's resume item is in flight; once the survivor took it over and
      // finished it, nothing is queued or in flight any more.
      const client = new Redis(world.redis.url);
      try {
        const busySets = createRedisKeys({ keyPrefix: 'countersign:' }).shards().map((shard) => shard.busy());
        expect((await Promise.all(busySets.map((set) => client.zrange(set, '0', '-1')))).flat().some((key) => key.endsWith(threadTs))).toBe(true);
        pair.releaseSurvivor();
        await waitFor(async () => (await Promise.all(busySets.map((set) => client.zcard(set)))).every((count) => count === 0), { timeoutMs: 20_000, message: 'no thread with work left' });
        // The failure was saved (the notice was what the process was posting when it died).
        const [threadKey] = await client.keys(`*:thread:${PAIR_TEAM}:${PAIR_CHANNEL}:${threadTs}`);
        const meta = JSON.parse((await client.hget(threadKey!, 'meta')) ?? '{}');
        expect(meta.failedTurn, JSON.stringify(meta)).toBeDefined();
      } finally {
        client.disconnect();
      }
      const notices = replies(threadTs).filter((message) => cardButtons(message.blocks).some((button) => button.actionId === 'countersign_retry'));
      const texts = replies(threadTs).map((message) => message.text);
      expect(notices, `no failure notice; thread: ${JSON.stringify(texts)}; survivor: ${logEvents(pair.survivor)}`).toHaveLength(1);
    } finally {
      world.openai.setResponder(undefined);
      await pair.stop();
    }
  }, 90_000);
});
