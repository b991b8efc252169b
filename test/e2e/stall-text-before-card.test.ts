import { describe, expect, it } from 'vitest';
import { logEvents, mentionBot, pairReplies, startBotPair, usePairWorld, waitUntilStopped } from './bot-pair.js';
import { cardButtons, waitFor } from './harness.js';

/**
 * run-and-publish.ts: the model's text before an approval card is posted whole (`postAnswer`,
 * no stream for a quick reply) and recorded nowhere, before the step is saved. A process that
 * stalls past its lock right after that post has its message item taken over: the successor runs
 * the turn again (continueInterrupted) and posts the text again with its card. The stalled process,
 * woken and fenced, takes nothing back (only a stream's messages are taken back): the text stands twice.
 * The same holds for the text shown above an unanswered-turn notice (unanswered-turn.ts).
 */
const world = usePairWorld();
const replies = (threadTs: string) => pairReplies(world.slack, threadTs);

describe('a process that stalls right after posting the text before a card', () => {
  it('the text shows once', async () => {
    const pair = await startBotPair({ ...world, fault: {}, holdSurvivor: true });
    try {
      const text = 'I will restart the worker in prod now.';
      world.openai.setResponder(() => ({ text, toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }));
      const threadTs = '1800400001.000100';
      // The first post of the thread is the text before the card (the status line is not a post).
      const hold = world.slack.holdNext('chat.postMessage');
      await mentionBot(pair.doomedUrl, threadTs, 'restart the worker');
      await hold.received;
      // A stall (a long GC pause, a frozen VM) while Slack takes the post.
      process.kill(pair.doomed.child.pid!, 'SIGSTOP');
      await waitUntilStopped(pair.doomed);
      hold.release();
      await waitFor(() => replies(threadTs).some((message) => message.text === text), { timeoutMs: 10_000, message: 'the stalled post to land' });
      pair.releaseSurvivor();
      await waitFor(() => replies(threadTs).some((message) => cardButtons(message.blocks).length > 0), { timeoutMs: 20_000, message: `the survivor's card; survivor: ${logEvents(pair.survivor)}` });
      process.kill(pair.doomed.child.pid!, 'SIGCONT');
      await waitFor(() => pair.doomed.output().includes('"event":"thread-fenced"'), { timeoutMs: 15_000, message: 'the woken process to find itself fenced' });

      const texts = replies(threadTs).map((message) => message.text);
      expect(texts.filter((each) => each === text), `thread: ${JSON.stringify(texts)}`).toHaveLength(1);
    } finally {
      world.openai.setResponder(undefined);
      await pair.stop();
    }
  }, 90_000);
});
