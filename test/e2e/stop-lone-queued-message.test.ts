import { describe, expect, it } from 'vitest';
import { deferred } from '../helpers/deferred.js';
import { nextTs, startHarness, threadReplies, waitFor } from './harness.js';

/**
 * A lone process (one replica: `docker stop`, a Recreate rollout) gets a follow-up message while it
 * is answering the thread's first one; Slack has its 200. Then SIGTERM. The stopping process
 * finishes the running turn but starts no new one (README, "Stopping"): a busy thread must not keep
 * it alive until the orchestrator's SIGKILL, which would cut an approved command mid-run. It hands
 * the thread back instead, the follow-up left queued in Redis and offered on the ready list, and
 * the next process to start answers it: its puller takes that hint at once, well within the
 * recovery sweep's grace.
 */
describe('a lone process stopped while a thread has an acked message queued behind its running turn', () => {
  it('answers the running turn, and the next process to start answers the queued message promptly', async () => {
    const h1 = await startHarness();
    const firstAsked = deferred();
    const releaseFirst = deferred();
    let asked = 0;
    h1.openai.setResponder(async () => {
      asked += 1;
      if (asked === 1) {
        firstAsked.resolve();
        await releaseFirst.promise;
        return { text: 'First answer.' };
      }
      return { text: 'Second answer.' };
    });
    let stopping: Promise<void> | undefined;
    let h2: Awaited<ReturnType<typeof h1.startReplica>> | undefined;
    try {
      const threadTs = nextTs();
      expect((await h1.mention({ user: 'UALICE', text: 'hello', ts: threadTs })).status).toBe(200);
      await firstAsked.promise;
      // Acked before the stop: queued behind the running turn.
      expect((await h1.threadMessage({ user: 'UALICE', text: 'and another thing', threadTs })).status).toBe(200);
      await h1.settled({ holding: 1 });
      stopping = h1.bot.stop();
      releaseFirst.resolve();
      await stopping;
      // h1 gave the first answer before its stop ended, and left the follow-up (no process answered it yet).
      expect(threadReplies(h1, threadTs).map((message) => message.text)).toEqual(['First answer.']);
      expect(asked).toBe(1);

      // The next process starts (the rollout's new pod, the restarted container).
      h2 = await h1.startReplica();
      // Within less than the 30 s lock TTL: h1 released the lock and left a ready-list hint, taken at once.
      await waitFor(() => threadReplies(h1, threadTs).some((message) => message.text === 'Second answer.'), { timeoutMs: 15_000, message: 'the next process to start answers the queued message' });
      expect(threadReplies(h1, threadTs).map((message) => message.text)).toEqual(['First answer.', 'Second answer.']);
    } finally {
      releaseFirst.resolve();
      await stopping;
      await h2?.stop();
      await h1.slack.close();
      await h1.openai.close();
    }
  }, 60_000);
});
