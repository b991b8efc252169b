import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import { logEvents, mentionAndApprove, mentionBot, pairReplies, startBotPair, usePairWorld, waitUntilStopped, type BotPair } from './bot-pair.js';
import { waitFor } from './harness.js';
import { createRedisKeys } from '../../src/store/redis-keys.js';

/**
 * Two bot processes share one Redis. The first stops (SIGSTOP, as in a long GC pause or a frozen
 * VM) at a named point for longer than its thread lock; the second takes the work over and
 * finishes it. Then the first wakes (SIGCONT) holding a stale fencing token: it must stop without
 * any effect. Each time: the tool ran once, one answer, nothing lost, no model call from the
 * process that woke.
 */
const world = usePairWorld();

const replies = (threadTs: string) => pairReplies(world.slack, threadTs);
let threadCounter = 0;
const nextThread = () => `18002000${String((threadCounter += 1)).padStart(2, '0')}.000100`;

/**
 * Wakes the stalled process and waits until its drain has stopped because it was fenced (the
 * `thread-fenced` line comes after any clean-up it does), so what follows sees the final state.
 */
async function wake(pair: BotPair): Promise<void> {
  process.kill(pair.doomed.child.pid!, 'SIGCONT');
  await waitFor(() => pair.doomed.output().includes('"event":"thread-fenced"'), { timeoutMs: 15_000, message: 'the woken process to find itself fenced' });
}

/** Once the first process has stopped at its stall point, the other one (held until now) runs and takes over. */
async function stalled(pair: BotPair): Promise<void> {
  await waitUntilStopped(pair.doomed);
  pair.releaseSurvivor();
}

async function stalledAt(point: string, scenario: (pair: BotPair) => Promise<void>) {
  const pair = await startBotPair({ ...world, fault: { COUNTERSIGN_STALL_AT: point }, holdSurvivor: true });
  try {
    await scenario(pair);
  } catch (error) {
    // What the other process did says whether it took the work the stalled one never got to.
    if (error instanceof Error) error.message += `; the other process's log: ${logEvents(pair.survivor)}`;
    throw error;
  } finally {
    await pair.stop();
  }
}

describe('a bot process that stalls past its lock and wakes up', () => {
  for (const [point, when] of [
    ['after-claim', 'right after claiming the resume of an approved step'],
    ['before-tool', 'just before the approved command starts'],
    ['after-tool', 'right after the approved command ran'],
  ] as const) {
    it(`stalled ${when}: the command runs once, one answer, and the woken process does nothing`, async () => {
      await stalledAt(point, async (pair) => {
        const answer = `Restarted, after a stall at ${point}.`;
        world.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: answer });
        const threadTs = nextThread();
        await mentionAndApprove(world.slack, pair.doomedUrl, threadTs);
        await stalled(pair);
        await waitFor(() => replies(threadTs).some((message) => message.text === answer), { timeoutMs: 15_000, message: 'the answer from the other process' });
        const requests = world.openai.requests.length;
        await wake(pair);
        expect(pair.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'prod']]);
        expect(replies(threadTs).filter((message) => message.text === answer)).toHaveLength(1);
        expect(replies(threadTs).filter((message) => message.text.includes('Sorry') || message.text.includes('went wrong'))).toEqual([]);
        expect(world.openai.requests.length).toBe(requests);
        if (point === 'after-tool') {
          const told = conversationOf(world.openai.requests.at(-1)!).find((message) => message.role === 'tool')?.text ?? '';
          expect(told).toContain('Interrupted: the bot process stopped while this call was running');
        }
      });
    }, 60_000);
  }

  it('stalled after writing the marker of the approved command but before starting it: it never runs, and the model is told it may not have', async () => {
    await stalledAt('after-marker', async (pair) => {
      const answer = 'The restart may not have happened; I will not repeat it.';
      world.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: answer });
      const threadTs = nextThread();
      await mentionAndApprove(world.slack, pair.doomedUrl, threadTs);
      await stalled(pair);
      await waitFor(() => replies(threadTs).some((message) => message.text === answer), { timeoutMs: 15_000, message: 'the answer from the other process' });
      await wake(pair);
      // At most once: the other process saw the marker and did not run it; the woken one, fenced, does not either.
      expect(pair.invocations()).toEqual([]);
      expect(conversationOf(world.openai.requests.at(-1)!).find((message) => message.role === 'tool')?.text).toContain('may or may not have completed');
    });
  }, 60_000);

  it('stalled right after a call that needs no approval ran, in a turn not yet saved: the other process does not run it again', async () => {
    await stalledAt('after-tool', async (pair) => {
      world.openai.enqueue({ toolCalls: [{ name: 'get_pods', arguments: { namespace: 'prod' } }] }, { text: 'Pods listed, once.' });
      const threadTs = nextThread();
      await mentionBot(pair.doomedUrl, threadTs, 'list the pods');
      await stalled(pair);
      await waitFor(() => replies(threadTs).some((message) => message.text === 'Pods listed, once.'), { timeoutMs: 15_000, message: 'the answer from the other process' });
      const requests = world.openai.requests.length;
      await wake(pair);
      expect(pair.invocations()).toEqual([['get', 'pods', '-n', 'prod']]);
      // The other process wrote the call the stalled turn started into the history, as interrupted.
      const conversation = conversationOf(world.openai.requests.at(-1)!);
      expect(conversation.flatMap((message) => message.toolCalls ?? []).map((call) => call.name)).toEqual(['get_pods']);
      expect(conversation.find((message) => message.role === 'tool')?.text).toContain('Interrupted');
      expect(replies(threadTs).filter((message) => message.text === 'Pods listed, once.')).toHaveLength(1);
      expect(world.openai.requests.length).toBe(requests);
    });
  }, 60_000);

  it('stalled while the answer streams into the thread: the other process rewrites the same message, and the woken one never edits it again', async () => {
    await stalledAt('mid-answer', async (pair) => {
      const answer = 'The queue drained and every worker is healthy again after the restart, all of them.';
      world.openai.setResponder(() => ({ text: answer, deltaDelayMs: 40 }));
      try {
        const threadTs = nextThread();
        await mentionBot(pair.doomedUrl, threadTs, 'how is the queue?');
        await stalled(pair);
        await waitFor(() => replies(threadTs).some((message) => message.text === answer), { timeoutMs: 15_000, message: 'the answer from the other process' });
        const edits = world.slack.callsTo('chat.update').length;
        await wake(pair);
        expect(replies(threadTs).map((message) => message.text)).toEqual([answer]);
        expect(world.slack.callsTo('chat.update').length).toBe(edits);
      } finally {
        world.openai.setResponder(undefined);
      }
    });
  }, 60_000);

  it('stalled with the answer saved but not posted: the other process posts it, and the woken one does not post it again', async () => {
    await stalledAt('before-answer', async (pair) => {
      const before = world.openai.requests.length;
      world.openai.enqueue({ text: 'Answered exactly once.' });
      const threadTs = nextThread();
      await mentionBot(pair.doomedUrl, threadTs, 'status?');
      await stalled(pair);
      await waitFor(() => replies(threadTs).some((message) => message.text === 'Answered exactly once.'), { timeoutMs: 15_000, message: 'the answer from the other process' });
      await wake(pair);
      expect(replies(threadTs).filter((message) => message.text === 'Answered exactly once.')).toHaveLength(1);
      expect(world.openai.requests.length - before).toBe(1);
    });
  }, 60_000);

  it('stalled right after recording an approval: the other process resumes the step once', async () => {
    await stalledAt('after-decision', async (pair) => {
      world.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } }] }, { text: 'Restarted api once.' });
      const threadTs = nextThread();
      await mentionAndApprove(world.slack, pair.doomedUrl, threadTs);
      await stalled(pair);
      await waitFor(() => replies(threadTs).some((message) => message.text === 'Restarted api once.'), { timeoutMs: 15_000, message: 'the answer from the other process' });
      const requests = world.openai.requests.length;
      const updates = world.slack.callsTo('chat.update').length;
      process.kill(pair.doomed.child.pid!, 'SIGCONT');
      // The woken process finishes its click: it updates the card, then queues the resume, which
      // finds nothing left to do. Once no thread has work queued or in flight, that has happened.
      await waitFor(() => world.slack.callsTo('chat.update').length > updates, { timeoutMs: 15_000, message: 'the woken process to update the card' });
      const client = new Redis(world.redis.url);
      try {
        const busySets = createRedisKeys({ keyPrefix: 'countersign:' }).shards().map((shard) => shard.busy());
        await waitFor(async () => (await Promise.all(busySets.map((set) => client.zcard(set)))).every((count) => count === 0), { timeoutMs: 15_000, message: 'no thread with work left' });
      } finally {
        client.disconnect();
      }
      expect(pair.invocations()).toEqual([['rollout', 'restart', 'deployment/api', '-n', 'prod']]);
      expect(replies(threadTs).filter((message) => message.text === 'Restarted api once.')).toHaveLength(1);
      expect(world.openai.requests.length).toBe(requests);
    });
  }, 60_000);
});
