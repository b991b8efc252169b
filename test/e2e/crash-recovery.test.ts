import { describe, expect, it } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import { logEvents, mentionAndApprove, mentionBot, pairReplies, startBotPair, usePairWorld } from './bot-pair.js';
import { cardButtons, waitFor } from './harness.js';

/**
 * Two bot processes share one Redis behind one Slack app. One is killed with SIGKILL at a named
 * point (a test-only hook); the other must finish the turn: no decision lost, no approved call run
 * twice, the answer posted once.
 */
const world = usePairWorld();

const startPair = (crashAt: string) => startBotPair({ ...world, fault: { COUNTERSIGN_CRASH_AT: crashAt }, holdSurvivor: true });
const replies = (threadTs: string) => pairReplies(world.slack, threadTs);
const mention = mentionBot;

describe('a bot process killed mid-turn', () => {
  it('killed while the approved command runs: the other process finishes the turn and does not run it again', async () => {
    const pair = await startPair('after-tool');
    try {
      world.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: 'Checked: the restart went through.' });
      const threadTs = '1800100001.000100';
      await mentionAndApprove(world.slack, pair.doomedUrl, threadTs);
      expect(await pair.doomed.exited).toBeNull();
      pair.releaseSurvivor();
      await waitFor(() => replies(threadTs).some((message) => message.text === 'Checked: the restart went through.'), { timeoutMs: 15_000, message: 'answer from the survivor' });
      expect(pair.invocations()).toHaveLength(1);
      const told = conversationOf(world.openai.requests.at(-1)!).find((message) => message.role === 'tool')?.text ?? '';
      expect(told).toContain('Interrupted: the bot process stopped while this call was running');
    } finally {
      await pair.stop();
    }
  }, 60_000);

  it('killed right after recording the decision: the decision is kept and the other process runs the call once', async () => {
    const pair = await startPair('after-decision');
    try {
      world.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } }] }, { text: 'Restarted api.' });
      const threadTs = '1800100002.000100';
      await mentionAndApprove(world.slack, pair.doomedUrl, threadTs);
      expect(await pair.doomed.exited).toBeNull();
      pair.releaseSurvivor();
      await waitFor(() => replies(threadTs).some((message) => message.text === 'Restarted api.'), { timeoutMs: 15_000, message: 'answer from the survivor' });
      expect(pair.invocations()).toEqual([['rollout', 'restart', 'deployment/api', '-n', 'prod']]);
      // The killed process never drew the decision: the card must not keep "waiting" and live buttons on a call that ran.
      const card = replies(threadTs).find((message) => (message.blocks ?? []).length > 0 && message.text !== 'Restarted api.');
      expect(card, 'the approval card').toBeDefined();
      expect(cardButtons(card!.blocks)).toEqual([]);
    } finally {
      await pair.stop();
    }
  }, 60_000);

  it('killed while the answer is being written: the other process writes it again into the same message', async () => {
    const pair = await startPair('mid-answer');
    try {
      const answer = 'The queue drained and every worker is healthy again after the restart.';
      world.openai.setResponder(() => ({ text: answer, deltaDelayMs: 40 }));
      const threadTs = '1800100004.000100';
      await mention(pair.doomedUrl, threadTs, 'how is the queue?');
      expect(await pair.doomed.exited).toBeNull();
      pair.releaseSurvivor();
      await waitFor(() => replies(threadTs).some((message) => message.text === answer), { timeoutMs: 15_000, message: 'answer from the survivor' });
      // The half answer the dead process left was rewritten, not left above the whole one.
      expect(replies(threadTs)).toHaveLength(1);
    } finally {
      world.openai.setResponder(undefined);
      await pair.stop();
    }
  }, 60_000);

  it('killed before posting the answer: the other process posts it, without asking the model again', async () => {
    const pair = await startPair('before-answer');
    try {
      const before = world.openai.requests.length;
      const threadTs = '1800100003.000100';
      const question = 'status of the almost lost answer?';
      // Requests are told apart by the question they carry: work an earlier test left is not this thread's.
      const lastQuestion = (request: (typeof world.openai.requests)[number]) => conversationOf(request).findLast((message) => message.role === 'user')?.text ?? '';
      world.openai.setResponder((request) => (lastQuestion(request).includes(question) ? { text: 'The answer that was almost lost.' } : { error: { status: 400, message: 'not this test' } }));
      await mention(pair.doomedUrl, threadTs, question);
      expect(await pair.doomed.exited).toBeNull();
      pair.releaseSurvivor();
      await waitFor(() => replies(threadTs).some((message) => message.text === 'The answer that was almost lost.'), { timeoutMs: 15_000, message: 'answer' });
      const sinceStart = () => world.openai.requests.slice(before);
      const aboutThisThread = sinceStart().filter((request) => lastQuestion(request).includes(question));
      const details = `asked since the pair started: ${sinceStart().map(lastQuestion).join(' / ')}; doomed: ${logEvents(pair.doomed)}; survivor: ${logEvents(pair.survivor)}`;
      expect(aboutThisThread, details).toHaveLength(1);
      expect(replies(threadTs).filter((message) => message.text === 'The answer that was almost lost.')).toHaveLength(1);
    } finally {
      world.openai.setResponder(undefined);
      await pair.stop();
    }
  }, 60_000);
});
