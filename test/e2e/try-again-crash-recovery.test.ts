import { describe, expect, it } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import { blockActionsPayload, postSlackInteraction } from '../helpers/signed-request.js';
import { type BotPair, logEvents, mentionBot, PAIR_CHANNEL, PAIR_SECRET, PAIR_TEAM, pairReplies, startBotPair, usePairWorld } from './bot-pair.js';
import { cardButtons, waitFor } from './harness.js';

/**
 * Try again takes the retry in (saves it) before it asks the model, and the retry item stays in
 * flight until the retried turn is shown. When the process handling it dies after that save, the
 * process that takes the thread over handles the same item: it must finish the retried turn, not
 * answer "nothing to retry" and leave the thread silent with no way to bring the turn back.
 */
const world = usePairWorld();

type ModelRequest = (typeof world.openai.requests)[number];

const ephemerals = (threadTs: string) =>
  world.slack
    .callsTo('chat.postEphemeral')
    .filter((call) => call.args.thread_ts === threadTs)
    .map((call) => String(call.args.text));

/** Alice's question fails on the doomed process; the returned click is Try again on its notice, as Alice. */
async function failedQuestion(pair: BotPair, threadTs: string, question: string) {
  await mentionBot(pair.doomedUrl, threadTs, question);
  const notice = await waitFor(() => pairReplies(world.slack, threadTs).find((message) => cardButtons(message.blocks).some((button) => button.actionId === 'countersign_retry')), {
    timeoutMs: 10_000,
    message: 'failure notice with Try again',
  });
  const retry = cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry')!;
  return (url: string) =>
    postSlackInteraction({
      url,
      signingSecret: PAIR_SECRET,
      payload: blockActionsPayload({ user: 'UALICE', channel: PAIR_CHANNEL, messageTs: notice.ts, threadTs, actionId: retry.actionId, value: retry.value, teamId: PAIR_TEAM }),
    }).catch(() => undefined);
}

async function waitForAnswer(options: { pair: BotPair; threadTs: string; answer: string; asked: () => number }) {
  const { pair, threadTs, answer } = options;
  try {
    await waitFor(() => pairReplies(world.slack, threadTs).some((message) => message.text === answer), { timeoutMs: 15_000, message: 'answer from the survivor' });
  } catch (error) {
    throw new Error(`${(error as Error).message}; model asked ${options.asked()} times; ephemerals: ${JSON.stringify(ephemerals(threadTs))}; survivor: ${logEvents(pair.survivor)}`);
  }
}

describe('Try again, its process dying after the retry was saved', () => {
  it('is finished by the other process, and a later click still finds nothing to retry', async () => {
    const pair = await startBotPair({ ...world, fault: {}, holdSurvivor: true });
    try {
      const threadTs = '1800300001.000100';
      const question = 'what is the retry-takeover status?';
      const ours = (request: ModelRequest) => conversationOf(request).some((message) => message.role === 'user' && (message.text ?? '').includes(question));
      let asked = 0;
      world.openai.setResponder((request) => {
        if (!ours(request)) return { error: { status: 400, message: 'not this test' } };
        asked += 1;
        if (asked === 1) return { error: { status: 400, message: 'model exploded' } };
        // The Try again turn has been saved and is asking the model: the process dies here.
        if (asked === 2) process.kill(pair.doomed.child.pid!, 'SIGKILL');
        return { text: 'Retry-takeover: all good.' };
      });
      const tryAgain = await failedQuestion(pair, threadTs, question);
      await tryAgain(pair.doomedUrl);
      await pair.doomed.exited;
      pair.releaseSurvivor();
      await waitForAnswer({ pair, threadTs, answer: 'Retry-takeover: all good.', asked: () => asked });
      expect(asked).toBe(3);
      expect(ephemerals(threadTs)).toEqual([]);

      // The retry is over: Try again on the notice, still shown, runs nothing more.
      await tryAgain(pair.survivorUrl);
      await waitFor(() => ephemerals(threadTs).length > 0, { timeoutMs: 10_000, message: 'the answer to the second click' });
      expect(ephemerals(threadTs)).toEqual(['There is nothing to retry here any more.']);
      expect(asked).toBe(3);
    } finally {
      world.openai.setResponder(undefined);
      await pair.stop();
    }
  }, 90_000);

  it('dying before posting the answer it saved: the other process posts it, without asking the model again', async () => {
    const pair = await startBotPair({ ...world, fault: { COUNTERSIGN_CRASH_AT: 'before-answer' }, holdSurvivor: true });
    try {
      const threadTs = '1800300002.000100';
      const question = 'what is the saved-retry-answer status?';
      const ours = (request: ModelRequest) => conversationOf(request).some((message) => message.role === 'user' && (message.text ?? '').includes(question));
      let asked = 0;
      world.openai.setResponder((request) => {
        if (!ours(request)) return { error: { status: 400, message: 'not this test' } };
        asked += 1;
        return asked === 1 ? { error: { status: 400, message: 'model exploded' } } : { text: 'Saved retry answer.' };
      });
      const tryAgain = await failedQuestion(pair, threadTs, question);
      await tryAgain(pair.doomedUrl);
      expect(await pair.doomed.exited).toBeNull();
      pair.releaseSurvivor();
      await waitForAnswer({ pair, threadTs, answer: 'Saved retry answer.', asked: () => asked });
      expect(asked).toBe(2);
      expect(ephemerals(threadTs)).toEqual([]);
    } finally {
      world.openai.setResponder(undefined);
      await pair.stop();
    }
  }, 90_000);
});
