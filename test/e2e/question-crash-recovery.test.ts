import { describe, expect, it } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import { blockActionsPayload, postSlackInteraction } from '../helpers/signed-request.js';
import { logEvents, mentionAndApprove, mentionBot, PAIR_CHANNEL, PAIR_SECRET, PAIR_TEAM, pairReplies, startBotPair, usePairWorld } from './bot-pair.js';
import { cardButtons, waitFor } from './harness.js';

/**
 * Two bot processes on one Redis. The first is killed (SIGKILL) right after it claimed the resume of
 * a decided step (`after-claim`): the second must finish the turn, as it does for an approval
 * (crash-recovery / stall-recovery tests). For a step of `ask_user` questions only it does not: the
 * history ends with the answers as plain tool results, `recoverInterruptedResume` looks only for
 * approval responses, and the thread stays silent for good.
 */
const world = usePairWorld();
const replies = (threadTs: string) => pairReplies(world.slack, threadTs);

describe('a bot process killed right after claiming the resume of an answered question', () => {
  it('control: after an approval, the other process finishes the turn', async () => {
    const pair = await startBotPair({ ...world, fault: { COUNTERSIGN_CRASH_AT: 'after-claim' }, holdSurvivor: true });
    try {
      world.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: 'Restarted after the crash.' });
      const threadTs = '1800300001.000100';
      await mentionAndApprove(world.slack, pair.doomedUrl, threadTs);
      expect(await pair.doomed.exited).toBeNull();
      pair.releaseSurvivor();
      await waitFor(() => replies(threadTs).some((message) => message.text === 'Restarted after the crash.'), { timeoutMs: 15_000, message: 'the answer from the survivor' });
    } finally {
      await pair.stop();
    }
  }, 60_000);

  it('the other process gives the answer to the model and posts its reply', async () => {
    const pair = await startBotPair({ ...world, fault: { COUNTERSIGN_CRASH_AT: 'after-claim' }, holdSurvivor: true });
    try {
      world.openai.enqueue({ toolCalls: [{ name: 'ask_user', arguments: { question: 'Which namespace?', options: ['staging', 'prod'] } }] }, { text: 'Going with prod.' });
      const threadTs = '1800300002.000100';
      await mentionBot(pair.doomedUrl, threadTs, 'restart the worker');
      const card = await waitFor(() => replies(threadTs).find((message) => cardButtons(message.blocks).length > 0), { timeoutMs: 10_000, message: 'the question' });
      const prod = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_answer_1')!;
      await postSlackInteraction({
        url: pair.doomedUrl,
        signingSecret: PAIR_SECRET,
        payload: blockActionsPayload({ user: 'UALICE', channel: PAIR_CHANNEL, messageTs: card.ts, threadTs, actionId: prod.actionId, value: prod.value, teamId: PAIR_TEAM }),
      }).catch(() => undefined);
      // Killed at the fault point, after the claim.
      expect(await pair.doomed.exited).toBeNull();
      pair.releaseSurvivor();
      try {
        await waitFor(() => replies(threadTs).some((message) => message.text === 'Going with prod.'), { timeoutMs: 20_000, message: 'the reply from the survivor' });
      } catch (error) {
        throw new Error(`${(error as Error).message}; survivor log: ${logEvents(pair.survivor)}`);
      }
      const result = conversationOf(world.openai.requests.at(-1)!).find((message) => message.role === 'tool');
      expect(JSON.parse(result?.text ?? '{}')).toEqual({ answeredBy: '<@UALICE>', answer: 'prod' });
    } finally {
      await pair.stop();
    }
  }, 60_000);
});
