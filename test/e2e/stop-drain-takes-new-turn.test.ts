import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { deferred } from '../helpers/deferred.js';
import { nextTs, startHarness, threadReplies, waitFor } from './harness.js';

/**
 * Review (stop): README says a process told to stop "finishes its turns but starts no new thread".
 * But a thread drain that is running when SIGTERM comes does not know the process is stopping: once
 * its running turn ends it takes the thread's next queued item and starts a new turn, even one that
 * another process queued after the stop began. Anything that turn runs (the model, an approved
 * command) is then cut by the orchestrator's SIGKILL at the end of its grace ("interrupted, never
 * run again"), and a thread that keeps getting work keeps the stopping process alive until then,
 * while the live replica that received the message would have run it in full.
 */
describe('stopping while a turn runs and the thread gets another message on a live replica', () => {
  it('does not start that new turn on the stopping process', async () => {
    const h1 = await startHarness();
    const h2 = await h1.startReplica();
    const redis = new Redis(inject('redisUrl'));
    const firstAsked = deferred();
    const releaseFirst = deferred();
    const secondAsked = deferred();
    const releaseSecond = deferred();
    let lockDuringFirst: string | null = null;
    let lockDuringSecond: string | null = null;
    let h1StoppedBeforeSecond = false;
    let h1Stopped = false;
    const lockValue = async () => {
      const keys = await redis.keys(`${h1.keyPrefix}*lock:*`);
      const values = await Promise.all(keys.map((key) => redis.get(key)));
      return values.filter((value) => value !== null).join(',') || null;
    };
    let asked = 0;
    h1.openai.setResponder(async () => {
      asked += 1;
      if (asked === 1) {
        lockDuringFirst = await lockValue();
        firstAsked.resolve();
        await releaseFirst.promise;
        return { text: 'First answer.' };
      }
      lockDuringSecond = await lockValue();
      h1StoppedBeforeSecond = h1Stopped;
      secondAsked.resolve();
      await releaseSecond.promise;
      return { text: 'Second answer.' };
    });
    let stopping: Promise<void> | undefined;
    try {
      const threadTs = nextTs();
      expect((await h1.mention({ user: 'UALICE', text: 'hello', ts: threadTs })).status).toBe(200);
      // Turn 1 runs on h1 (h1 holds the thread's lock), its model answer held.
      await firstAsked.promise;
      expect(lockDuringFirst).not.toBeNull();

      // SIGTERM on h1.
      stopping = h1.bot.stop().then(() => {
        h1Stopped = true;
      });
      // Barrier: h1 no longer accepts connections (its stop is under way).
      await waitFor(async () => fetch(`${h1.baseUrl}/healthz`).then(() => false, () => true), { message: 'h1 stops listening' });

      // The user writes again in the thread; the live replica h2 receives it and queues it behind h1's turn.
      expect((await h2.threadMessage({ user: 'UALICE', text: 'and another thing', threadTs })).status).toBe(200);
      await waitFor(
        async () => {
          const queues = await redis.keys(`${h1.keyPrefix}*:queue:*`);
          const lengths = await Promise.all(queues.map((key) => redis.type(key).then((type) => (type === 'list' ? redis.llen(key) : type === 'zset' ? redis.zcard(key) : type === 'stream' ? redis.xlen(key) : 0))));
          return lengths.some((length) => length > 0);
        },
        { message: 'the second message queued on the thread' },
      );

      // Turn 1 ends.
      releaseFirst.resolve();
      await waitFor(() => threadReplies(h1, threadTs).some((message) => message.text === 'First answer.'), { message: 'the first answer' });
      // The second message's turn asks the model: which process runs it? The live replica, at once
      // (h1 hands the thread back with a hint), not after a recovery sweep's grace (the 30 s lock TTL).
      let secondStarted = false;
      void secondAsked.promise.then(() => {
        secondStarted = true;
      });
      await waitFor(() => secondStarted, { timeoutMs: 10_000, message: 'the second turn to start promptly (well within the 30 s recovery grace)' });
      const ranByStoppingProcess = lockDuringSecond === lockDuringFirst && !h1StoppedBeforeSecond;
      expect(ranByStoppingProcess, `the stopping process h1 (same thread-lock token ${lockDuringSecond} as its turn 1, its stop not finished) started the new turn a replica queued after SIGTERM`).toBe(false);
      // Run under a new lock (h1 released its own, and takes no thread while stopping): the live replica's.
      expect(lockDuringSecond).not.toBeNull();
      expect(lockDuringSecond).not.toBe(lockDuringFirst);
      // And run in full there: its answer is posted, and h1's stop ends meanwhile.
      releaseSecond.resolve();
      await waitFor(() => threadReplies(h1, threadTs).some((message) => message.text === 'Second answer.'), { timeoutMs: 10_000, message: 'the second answer, posted by the live replica' });
      await stopping;
    } finally {
      releaseFirst.resolve();
      releaseSecond.resolve();
      await stopping;
      await h2.stop();
      await h1.slack.close();
      await h1.openai.close();
      await redis.quit();
    }
  }, 90_000);
});
