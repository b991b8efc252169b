import type { FinishReason, ModelMessage } from 'ai';
import { approvedRunsAwaiting } from '../agent/approved-runs.js';
import type { ApprovedRun } from '../agent/tool-set.js';
import type { ThreadState } from '../store/thread-state.js';
import { carriedApprovals } from './carried-approvals.js';
import { newFailedTurn, postFailureNotice } from './failed-turn.js';
import type { LiveAnswer } from './live-answer.js';
import { mentionable } from './participants.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import type { TurnScope } from './turn-scope.js';
import { takeBackUnrecorded } from './unrecorded-post.js';

/**
 * Why a turn that waits for nobody ended without an answer: it reached `agent.maxSteps` while the
 * model was still calling tools (whatever it said along the way), the model's response was cut off
 * while it was calling tools (see `TurnOutcome.cutOff`: none of those calls ran) or while it was
 * writing its answer (what it wrote is only the start of one), or what the model
 * said shows nothing (a content filter, a reasoning model that spent its output budget, an empty
 * reply, or text that renders to nothing, such as an empty code block).
 */
export type UnansweredReason =
  | { kind: 'step-limit'; steps: number }
  | { kind: 'cut-off'; finishReason: FinishReason }
  | { kind: 'answer-cut-off'; finishReason: FinishReason }
  | { kind: 'no-answer' };

/** Whether an answer of this text would show the reader nothing (see `ThreadMessenger.answerShowsNothing`). */
export type ShowsNothing = (markdown: string) => boolean;

/**
 * Read from what the turn added to the history, for a turn that waits for nobody; undefined when
 * it answered. Judged by what the thread would show, not by the raw text: non-blank text that
 * renders to nothing would otherwise count as an answer, post nothing, and leave the thread silent
 * under its status line. Every step but the last one asked for tools, and a step with content is one
 * assistant message; so the turn stopped at the limit exactly when there are `maxSteps` of them and
 * the last step's tool results close the history. Text does not make that an answer: a model that
 * comments as it works ("Checking staging first.") reaches the limit with text from earlier steps.
 * A silent last step leaves no assistant message of its own (the AI SDK drops an empty one; see
 * `withoutEmptyAnswer`). `stepsBefore`: the steps the same turn took in the rounds before this one,
 * resumed at once (a step the approval hook or countersign decided; see `TurnSoFar`), which
 * count toward `maxSteps` as well.
 */
export function unansweredReason(options: {
  responseMessages: readonly ModelMessage[];
  text: string;
  maxSteps: number;
  stepsBefore?: number;
  showsNothing: ShowsNothing;
  cutOff?: { finishReason: FinishReason; midAnswer?: boolean } | undefined;
}): UnansweredReason | undefined {
  // A half answer is no answer, however much of it shows.
  if (options.cutOff?.midAnswer) return options.showsNothing(options.text) ? { kind: 'no-answer' } : { kind: 'answer-cut-off', finishReason: options.cutOff.finishReason };
  // Whatever the model wrote before it was cut off is commentary on calls that never ran.
  if (options.cutOff) return { kind: 'cut-off', finishReason: options.cutOff.finishReason };
  const steps = (options.stepsBefore ?? 0) + options.responseMessages.filter((message) => message.role === 'assistant').length;
  const stoppedBetweenSteps = options.responseMessages.at(-1)?.role === 'tool';
  if (stoppedBetweenSteps && steps >= options.maxSteps) return { kind: 'step-limit', steps };
  return options.showsNothing(options.text) ? { kind: 'no-answer' } : undefined;
}

/** What the thread is told; its Try again asks the model again from the saved history. */
export function unansweredNotice(reason: UnansweredReason): string {
  switch (reason.kind) {
    case 'step-limit':
      return `:warning: I stopped after ${reason.steps} steps without finishing. Click *Try again* or ask me to continue.`;
    case 'cut-off':
      return `:warning: The model's response was cut off (finish reason \`${reason.finishReason}\`${reason.finishReason === 'length' ? ': its output limit' : ''}) while it was asking for tools, so none of those calls ran. Click *Try again* or send another message.`;
    case 'answer-cut-off':
      return `:warning: The model's answer was cut off (finish reason \`${reason.finishReason}\`${reason.finishReason === 'length' ? ': its output limit' : ''}). Click *Try again* or send another message.`;
    case 'no-answer':
      return ':warning: The model returned no answer. Click *Try again* or send another message.';
  }
}

/**
 * The history without a last assistant message that holds no tool call and no text that shows
 * anything (only reasoning, blank text, an empty code block): it is no answer, providers refuse
 * some of them when sent back, and Try again only runs a turn whose history ends where the model
 * is asked again.
 */
export function withoutEmptyAnswer(messages: readonly ModelMessage[], { showsNothing }: { showsNothing: ShowsNothing }): ModelMessage[] {
  const kept = [...messages];
  while (kept.length > 0 && isEmptyAnswer(kept.at(-1)!, showsNothing)) kept.pop();
  return kept;
}

function isEmptyAnswer(message: ModelMessage, showsNothing: ShowsNothing): boolean {
  if (message.role !== 'assistant') return false;
  if (typeof message.content === 'string') return showsNothing(message.content);
  if (message.content.some((part) => part.type === 'tool-call')) return false;
  return showsNothing(message.content.map((part) => (part.type === 'text' ? part.text : '')).join(''));
}

/**
 * A turn ended with no answer and nothing waiting: the thread gets a notice with Try again instead
 * of silence (posting it also clears the status line), and the turn is saved as a failed one, so
 * Try again runs it again for the same requester. What the model wrote on the way is shown as it
 * is, above the notice. The calls that ran are in the history with their results, so the retry
 * continues from them and runs none of them again. `retryOf`: the failure this turn was Try again
 * of (see `FailedTurn.retryOf`). `approvedRuns`: what a turn stopped before it could run them was
 * resumed with; those still awaiting their run are kept with the failure, as after a failed turn,
 * so Try again runs them (once, judged again) rather than finding them approved and nothing to run.
 */
export function createUnansweredTurn({ logger, now }: Pick<PhaseDependencies, 'logger' | 'now'>) {
  return async function recordUnansweredTurn(
    scope: TurnScope,
    thread: ThreadState,
    unanswered: { reason: UnansweredReason; text: string; requesterId: string; answer: LiveAnswer; retryOf?: string; approvedRuns?: ReadonlyMap<string, ApprovedRun> },
  ): Promise<void> {
    const where = { channel: thread.channel, threadTs: thread.threadTs };
    // The text is shown in full (blank text is closed as it is: there is nothing to mark as cut
    // off, and a stream that showed part of text that renders to nothing is emptied); the notice
    // after it says the turn did not finish, so a failed post only loses commentary. Posting the
    // notice is what clears the status line. A half answer is marked as cut off, as after a failure.
    const text = unanswered.reason.kind === 'answer-cut-off' ? `${unanswered.text} …` : unanswered.text;
    const shown = unanswered.answer.stream
      ? unanswered.answer.stream.finish(text)
      : text.trim()
        ? scope.messenger.postAnswer({ ...where, markdown: text, mentionableUserIds: mentionable(thread), ...(thread.answerTs ? { replacing: thread.answerTs } : {}) })
        : undefined;
    const posted = await shown?.catch((error: unknown) => logger.warn({ event: 'answer-finish-failed', err: error }, 'could not show the text of an unfinished turn'));
    // A whole post is on record nowhere: should the save below be refused as fenced, the thread's
    // new holder runs the turn again and shows the text itself, so this copy is taken back.
    const takeBack = posted ? takeBackUnrecorded(scope, { channel: thread.channel, threadKey: thread.threadKey, posted, recorded: thread.answerTs ?? [] }) : undefined;
    delete thread.answerTs;
    const notice = unansweredNotice(unanswered.reason);
    const approvedCalls = carriedApprovals(approvedRunsAwaiting({ runs: unanswered.approvedRuns ?? new Map(), messages: thread.messages }));
    thread.failedTurn = newFailedTurn({ requesterId: unanswered.requesterId, at: now(), notice, approvedCalls, ...(unanswered.retryOf === undefined ? {} : { retryOf: unanswered.retryOf }) });
    await scope.save(thread, { settled: true, ...(takeBack ? { takeBack } : {}) });
    logger.warn({ event: 'turn-unanswered', threadKey: thread.threadKey, reason: unanswered.reason.kind, ...(unanswered.reason.kind === 'cut-off' || unanswered.reason.kind === 'answer-cut-off' ? { finishReason: unanswered.reason.finishReason } : {}) }, 'agent turn ended without an answer');
    await postFailureNotice(scope, thread, { text: notice, settled: true });
  };
}
