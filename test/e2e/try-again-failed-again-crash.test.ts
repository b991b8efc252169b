import { describe, expect, it } from 'vitest';
import { createRedisStore } from '../../src/store/redis-store.js';
import { conversationOf } from '../helpers/fake-openai.js';
import { blockActionsPayload, postSlackInteraction } from '../helpers/signed-request.js';
import { logEvents, mentionBot, PAIR_CHANNEL, PAIR_SECRET, PAIR_TEAM, pairReplies, startBotPair, usePairWorld } from './bot-pair.js';
import { cardButtons, waitFor } from './harness.js';

/**
 * Try again whose retried turn fails again saves the new failure before posting its notice, and the
 * retry item stays in flight until then. When the process dies in between, the process that takes
 * the item over must post that notice: it is the only way the thread hears the retry failed, and the
 * only Try again for the new failure.
 */
const world = usePairWorld();
type ModelRequest = (typeof world.openai.requests)[number];

const ephemerals = (threadTs: string) =>
  world.slack
    .callsTo('chat.postEphemeral')
    .filter((call) => call.args.thread_ts === threadTs)
    .map((call) => String(call.args.text));

/** Resolves once no thread has work queued or in flight: the survivor has finished the retry item. */
async function noWorkInFlight(): Promise<void> {
  const store = createRedisStore({ url: world.redis.url });
  try {
    await waitFor(async () => (await store.busyThreads({ limit: 10 })).length === 0, { timeoutMs: 15_000, message: 'the retry item to be finished' });
  } finally {
    await store.close();
  }
}

describe('Try again whose retried turn fails again, the process dying before the new notice is posted', () => {
  it('the process taking the item over tells the thread (a notice with Try again), not "nothing to retry" and silence', async () => {
    const pair = await startBotPair({ ...world, fault: {}, holdSurvivor: true });
    try {
      const threadTs = '1800300009.000100';
      const question = 'what is the failed-again status?';
      const ours = (request: ModelRequest) => conversationOf(request).some((message) => message.role === 'user' && (message.text ?? '').includes(question));
      let asked = 0;
      world.openai.setResponder((request) => {
        if (!ours(request)) return { error: { status: 400, message: 'not this test' } };
        asked += 1;
        return { error: { status: 400, message: `model exploded ${asked}` } };
      });
      await mentionBot(pair.doomedUrl, threadTs, question);
      const notice = await waitFor(() => pairReplies(world.slack, threadTs).find((message) => cardButtons(message.blocks).some((button) => button.actionId === 'countersign_retry')), {
        timeoutMs: 10_000,
        message: 'failure notice with Try again',
      });
      const retry = cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry')!;
      // The retried turn's failure notice: its process is killed as it posts it, before Slack has it.
      let killed = false;
      world.slack.failWhen(
        'chat.postMessage',
        (call) => {
          if (killed || call.args.thread_ts !== threadTs || !String(call.args.text ?? '').includes('could not finish')) return false;
          killed = true;
          process.kill(pair.doomed.child.pid!, 'SIGKILL');
          return true;
        },
        { error: 'internal_error' },
      );
      await postSlackInteraction({
        url: pair.doomedUrl,
        signingSecret: PAIR_SECRET,
        payload: blockActionsPayload({ user: 'UALICE', channel: PAIR_CHANNEL, messageTs: notice.ts, threadTs, actionId: retry.actionId, value: retry.value, teamId: PAIR_TEAM }),
      }).catch(() => undefined);
      await pair.doomed.exited;
      expect(asked).toBe(2);
      pair.releaseSurvivor();

      // The survivor handles the same retry item. The retried turn failed and its failure is saved,
      // but nobody in the thread has heard of it, and only a notice for it can offer Try again.
      const heard = await waitFor(
        () => {
          const notices = pairReplies(world.slack, threadTs).filter((message) => message.text.includes('could not finish'));
          return notices.length >= 2 || ephemerals(threadTs).length > 0 ? { notices: notices.length, ephemerals: ephemerals(threadTs) } : undefined;
        },
        { timeoutMs: 15_000, message: 'what the survivor told the thread' },
      ).catch((error: Error) => {
        throw new Error(`${error.message}; survivor: ${logEvents(pair.survivor)}`);
      });
      // Whatever else the survivor does with the item is done before it finishes it.
      await noWorkInFlight();
      expect({ notices: pairReplies(world.slack, threadTs).filter((message) => message.text.includes('could not finish')).length, ephemerals: ephemerals(threadTs) }, JSON.stringify(heard)).toEqual({
        notices: 2,
        ephemerals: [],
      });

      // The new notice's Try again runs the turn again.
      const again = pairReplies(world.slack, threadTs).filter((message) => message.text.includes('could not finish')).at(-1)!;
      const retryAgain = cardButtons(again.blocks).find((button) => button.actionId === 'countersign_retry')!;
      world.openai.setResponder((request) => (ours(request) ? { text: 'Failed-again: all good.' } : { error: { status: 400, message: 'not this test' } }));
      await postSlackInteraction({
        url: pair.survivorUrl,
        signingSecret: PAIR_SECRET,
        payload: blockActionsPayload({ user: 'UALICE', channel: PAIR_CHANNEL, messageTs: again.ts, threadTs, actionId: retryAgain.actionId, value: retryAgain.value, teamId: PAIR_TEAM }),
      });
      await waitFor(() => pairReplies(world.slack, threadTs).some((message) => message.text === 'Failed-again: all good.'), { timeoutMs: 15_000, message: 'the answer to Try again on the new notice' });
      expect(ephemerals(threadTs)).toEqual([]);
    } finally {
      world.slack.failWhen('chat.postMessage', undefined);
      world.openai.setResponder(undefined);
      await pair.stop();
    }
  }, 90_000);
});
