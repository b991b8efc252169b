import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { conversationOf, type RecordedModelRequest, type ScriptedReply } from '../helpers/fake-openai.js';
import type { StoredSlackMessage } from '../helpers/fake-slack-api.js';
import { appMentionEnvelope, blockActionsPayload, postSlackEvent, postSlackInteraction } from '../helpers/signed-request.js';
import { logEvents, PAIR_BOT_USER, PAIR_CHANNEL, PAIR_SECRET, PAIR_TEAM, pairReplies, startBotPair, usePairWorld, type BotPair } from './bot-pair.js';
import { cardButtons, waitFor } from './harness.js';

/**
 * An answer whose post failed at Slack leaves `thread.outbox` saved: only postOutbox clears it,
 * and only a later turn that ANSWERS overwrites it (a turn that ends in a card or a failure keeps
 * it). Every recovery path reads any outbox as "the answer the interrupted work left" and posts it
 * instead of finishing the interrupted work: `recoverInterruptedResume` (resume-step.ts),
 * `continueInterrupted` (handle-message.ts) and `showLeftOver` (retry-failed-turn.ts). The thread
 * gets the stale answer of an earlier question, and the approved call / the question / the retry is
 * never finished.
 */
const world = usePairWorld();
const replies = (threadTs: string) => pairReplies(world.slack, threadTs);

function mentionIn(url: string, threadTs: string, ts: string, text: string) {
  return postSlackEvent({
    url,
    signingSecret: PAIR_SECRET,
    envelope: appMentionEnvelope({ user: 'UALICE', text: `<@${PAIR_BOT_USER}> ${text}`, channel: PAIR_CHANNEL, ts, ...(ts === threadTs ? {} : { threadTs }), teamId: PAIR_TEAM }),
  });
}

function click(pair: BotPair, threadTs: string, message: StoredSlackMessage, actionId: string, user: string) {
  const button = cardButtons(message.blocks).find((each) => each.actionId === actionId)!;
  return postSlackInteraction({
    url: pair.doomedUrl,
    signingSecret: PAIR_SECRET,
    payload: blockActionsPayload({ user, channel: PAIR_CHANNEL, messageTs: message.ts, threadTs, actionId: button.actionId, value: button.value, teamId: PAIR_TEAM }),
  }).catch(() => undefined);
}

const STALE = 'Stale answer to the first question, never shown.';
const FIRST_QUESTION = 'how many pods run?';

/** The model, by what the request carries: the first question gets STALE; `after` answers the second. */
function modelFor(second: (conversation: ReturnType<typeof conversationOf>) => ScriptedReply | Promise<ScriptedReply>) {
  return (request: RecordedModelRequest): ScriptedReply | Promise<ScriptedReply> => {
    const conversation = conversationOf(request);
    const lastUser = conversation.findLast((entry) => entry.role === 'user')?.text ?? '';
    if (lastUser.includes(FIRST_QUESTION)) return { text: STALE };
    return second(conversation.slice(conversation.findLastIndex((entry) => entry.role === 'user') + 1));
  };
}

/** The first question's answer fails to post (Slack 500): the thread is told, the outbox stays saved. */
async function firstAnswerLost(url: string, threadTs: string) {
  world.slack.failWhen('chat.postMessage', (call) => String(call.args.text ?? '').includes('never shown'), { status: 500 });
  await mentionIn(url, threadTs, threadTs, FIRST_QUESTION);
  await waitFor(() => replies(threadTs).find((message) => message.text.includes('Something went wrong on my side')), { timeoutMs: 10_000, message: 'failure notice of the lost answer' });
  world.slack.failWhen('chat.postMessage', undefined);
}

async function withPair(crashAt: string, scenario: (pair: BotPair) => Promise<void>) {
  const pair = await startBotPair({ ...world, fault: { COUNTERSIGN_CRASH_AT: crashAt }, holdSurvivor: true });
  try {
    await scenario(pair);
  } finally {
    world.openai.setResponder(undefined);
    await pair.stop();
  }
}

/** Waits until the survivor showed either the expected answer or the stale one, then checks which. */
async function expectFinished(pair: BotPair, threadTs: string, expected: string, what: string) {
  await waitFor(() => replies(threadTs).some((message) => message.text === expected || message.text === STALE), {
    timeoutMs: 20_000,
    message: `the survivor to finish ${what}; survivor: ${logEvents(pair.survivor)}`,
  });
  const texts = replies(threadTs).map((message) => message.text);
  const details = `thread: ${JSON.stringify(texts)}; tool runs: ${JSON.stringify(pair.invocations())}; survivor: ${logEvents(pair.survivor)}`;
  expect(texts, `the stale answer of the first question is posted instead of finishing ${what}; ${details}`).not.toContain(STALE);
  expect(texts).toContain(expected);
}

describe('an answer that failed to post, then an interrupted later turn', () => {
  it('a resume claimed and then interrupted (crash after-claim) runs the approved call, not the stale answer', async () => {
    await withPair('after-claim', async (pair) => {
      const threadTs = '1800300001.000100';
      world.openai.setResponder(modelFor((since) => (since.some((entry) => entry.role === 'tool') ? { text: 'Restarted the worker.' } : { toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] })));
      await firstAnswerLost(pair.doomedUrl, threadTs);

      await mentionIn(pair.doomedUrl, threadTs, '1800300001.000200', 'restart the worker');
      const card = await waitFor(() => replies(threadTs).find((message) => cardButtons(message.blocks).some((button) => button.actionId === 'countersign_approve')), { timeoutMs: 10_000, message: 'card' });
      await click(pair, threadTs, card, 'countersign_approve', 'UBOB');
      expect(await pair.doomed.exited).toBeNull();
      pair.releaseSurvivor();

      await expectFinished(pair, threadTs, 'Restarted the worker.', 'the resume');
      expect(pair.invocations()).toHaveLength(1);
    });
  }, 90_000);

  it('a message whose turn was interrupted mid-tool (crash before-tool) is answered, not given the stale answer', async () => {
    await withPair('before-tool', async (pair) => {
      const threadTs = '1800300002.000100';
      world.openai.setResponder(modelFor((since) => (since.some((entry) => entry.role === 'tool') ? { text: 'Three pods run in prod.' } : { toolCalls: [{ name: 'get_pods', arguments: { namespace: 'prod' } }] })));
      await firstAnswerLost(pair.doomedUrl, threadTs);

      await mentionIn(pair.doomedUrl, threadTs, '1800300002.000200', 'list the prod pods');
      expect(await pair.doomed.exited).toBeNull();
      pair.releaseSurvivor();

      await expectFinished(pair, threadTs, 'Three pods run in prod.', 'the second question');
    });
  }, 90_000);

  it('a Try again interrupted mid-tool (crash before-tool) is finished by the survivor, not replaced by the stale answer', async () => {
    await withPair('before-tool', async (pair) => {
      const threadTs = '1800300003.000100';
      let refused = false;
      world.openai.setResponder(
        modelFor((since) => {
          // The second question's first turn fails (the model refuses the request): a notice with Try again.
          if (!refused) {
            refused = true;
            return { error: { status: 400, message: 'model said no' } };
          }
          return since.some((entry) => entry.role === 'tool') ? { text: 'Retried: three pods run in prod.' } : { toolCalls: [{ name: 'get_pods', arguments: { namespace: 'prod' } }] };
        }),
      );
      await firstAnswerLost(pair.doomedUrl, threadTs);

      await mentionIn(pair.doomedUrl, threadTs, '1800300003.000200', 'list the prod pods');
      const notice = await waitFor(() => replies(threadTs).find((message) => cardButtons(message.blocks).some((button) => button.actionId === 'countersign_retry')), {
        timeoutMs: 10_000,
        message: 'failure notice with Try again',
      });
      await click(pair, threadTs, notice, 'countersign_retry', 'UALICE');
      expect(await pair.doomed.exited).toBeNull();
      pair.releaseSurvivor();

      await expectFinished(pair, threadTs, 'Retried: three pods run in prod.', 'the retry');
    });
  }, 90_000);

  it('Try again clicked twice quickly, the retry ending in a card: the second click does not post the stale answer (no crash needed)', async () => {
    await withPair('none', async (pair) => {
      const threadTs = '1800300004.000100';
      let refused = false;
      let openGate!: () => void;
      const gate = new Promise<void>((resolve) => {
        openGate = resolve;
      });
      world.openai.setResponder(
        modelFor(async () => {
          if (!refused) {
            refused = true;
            return { error: { status: 400, message: 'model said no' } };
          }
          await gate;
          return { toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] };
        }),
      );
      await firstAnswerLost(pair.doomedUrl, threadTs);
      await mentionIn(pair.doomedUrl, threadTs, '1800300004.000200', 'restart the worker');
      const notice = await waitFor(() => replies(threadTs).find((message) => cardButtons(message.blocks).some((button) => button.actionId === 'countersign_retry')), {
        timeoutMs: 10_000,
        message: 'failure notice with Try again',
      });
      const requests = world.openai.requests.length;
      await click(pair, threadTs, notice, 'countersign_retry', 'UALICE');
      // The retried turn is asking the model; meanwhile the same person clicks Try again once more.
      await waitFor(() => world.openai.requests.length > requests, { timeoutMs: 10_000, message: 'the retried turn to ask the model' });
      await click(pair, threadTs, notice, 'countersign_retry', 'UALICE');
      const client = new Redis(world.redis.url);
      try {
        await waitFor(async () => {
          const [queue] = await client.keys(`*:queue:${PAIR_TEAM}:${PAIR_CHANNEL}:${threadTs}`);
          return queue !== undefined && (await client.llen(queue)) > 0;
        }, { timeoutMs: 10_000, message: 'the second click to be queued' });
      } finally {
        client.disconnect();
      }
      const ephemerals = world.slack.callsTo('chat.postEphemeral').length;
      openGate();
      await waitFor(() => replies(threadTs).find((message) => cardButtons(message.blocks).some((button) => button.actionId === 'countersign_approve')), { timeoutMs: 10_000, message: 'the card of the retried turn' });
      // Barrier: the second click is answered (privately: nothing to retry) or the stale answer shows.
      await waitFor(() => world.slack.callsTo('chat.postEphemeral').length > ephemerals || replies(threadTs).some((message) => message.text === STALE), {
        timeoutMs: 10_000,
        message: 'the second click to be handled',
      });
      const texts = replies(threadTs).map((message) => message.text);
      expect(texts, `a second Try again posts the first question's lost answer under the card; thread: ${JSON.stringify(texts)}`).not.toContain(STALE);
    });
  }, 90_000);
});
