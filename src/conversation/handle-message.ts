import { answeredCallIdsOf, currentExchange, toolCallIdsOf } from '../agent/current-exchange.js';
import { closingToolMessage } from '../agent/decision-messages.js';
import { closeUnansweredCalls, recordUnrecordedCalls } from '../agent/interrupted-calls.js';
import type { PendingStep } from '../approvals/pending-step.js';
import type { AuditEventInput } from '../audit/audit-event.js';
import { supersedeTransition } from '../approvals/transitions/close-step.js';
import { commitTransition, StepContendedError } from '../approvals/transitions/commit-transition.js';
import { logUnconfirmedWithdrawal } from '../approvals/unconfirmed-withdrawal.js';
import type { ThreadState } from '../store/thread-state.js';
import { postOutbox } from './answer-outbox.js';
import { createCarriedApprovalsClosing } from './close-carried-approvals.js';
import type { CloseInterruptedCalls } from './close-interrupted-calls.js';
import { postUnpostedNotice } from './failed-turn.js';
import { interruptedCallRecords } from './interrupted-call-records.js';
import { addParticipants } from './participants.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import type { RunAndPublish } from './run-and-publish.js';
import type { StepResumer } from './resume-step.js';
import type { StepCards } from './step-card.js';
import type { LoadMessageThread, LoadThread } from './thread-loader.js';
import type { TurnScope } from './turn-scope.js';
import { earlierMessagesContext, userMessage } from './user-messages.js';
import type { MessageWorkItem } from './work-item.js';

/** Enough to recognise a re-delivered item after a crash; older messages are long answered. */
const HANDLED_TS_KEPT = 50;
/**
 * Each resume needs a step decided between its card being posted and the message closing it, so a
 * longer chain means something keeps deciding at once; the message then stops, saying so.
 */
const MAX_RESUMES_BEFORE_MESSAGE = 5;

type MessageDependencies = Pick<PhaseDependencies, 'store' | 'logger' | 'now' | 'botUserId'> & {
  loadThread: LoadThread;
  loadMessageThread: LoadMessageThread;
  runAndPublish: RunAndPublish;
  closeInterruptedCalls: CloseInterruptedCalls;
  cards: StepCards;
  resumer: StepResumer;
};

/** A new message in a thread: settle the open card, take the message in (once), run the model. */
export function createMessageHandler(options: MessageDependencies) {
  const { store, logger, now, loadThread, loadMessageThread, runAndPublish, cards, resumer } = options;
  const closeCarriedApprovals = createCarriedApprovalsClosing(options);

  async function handleMessage(scope: TurnScope, item: MessageWorkItem): Promise<void> {
    // Read under the thread's lock, before the take-in: deleted while it waited, the message is
    // not acted on (no card closed, nothing run or answered); deleted any later, it is not undone.
    const { thread, deleted } = await loadMessageThread(item, scope);
    // Already taken in by a process that stopped before finishing: continue its turn, don't add it again.
    if (thread.handledTs?.includes(item.ts)) return continueInterrupted(scope, thread, item.userId);
    // Before the deletion check: what the step's approvers decided has already run, deleted or not.
    // Finished before the take-in, which would clear what that resumed turn left.
    if (await resumer.finishInlineResume(scope, thread)) {
      await scope.flush();
      Object.assign(thread, await loadThread(thread, scope));
    }
    if (deleted) {
      logger.info({ event: 'deleted-message-skipped', channel: item.channel, threadTs: item.threadTs, ts: item.ts }, 'did not take in a message deleted while it waited');
      return;
    }
    if (thread.messages.length === 0 && item.readEarlierMessages) {
      const earlier = await scope.messenger.readThread({ channel: item.channel, threadTs: item.threadTs }).catch((error: unknown) => {
        logger.warn({ event: 'thread-read-failed', err: error }, 'could not read earlier thread messages');
        return [];
      });
      const context = earlierMessagesContext({ messages: earlier, excludeTs: item.ts, botUserId: options.botUserId });
      if (context) thread.messages.push(context);
      addParticipants(thread, earlier.flatMap((message) => (message.fromBot || !message.userId ? [] : [message.userId])));
    }
    addParticipants(thread, [item.userId]);
    if (thread.pendingStepId !== undefined) await settlePendingStep(scope, thread, item);
    // A half-written answer to an earlier message stays as it is; this message gets its own. An
    // earlier answer still saved is not this turn's either: nothing recovering this turn posts it.
    delete thread.answerTs;
    delete thread.outbox;
    delete thread.unpostedStopNotice;
    // The message ends a failed turn (its Try again finds nothing to retry): what people approved
    // for that Try again lapses visibly, not with the card still saying "Approved".
    await closeCarriedApprovals(scope, thread);
    delete thread.failedTurn;
    delete thread.inlineResume;
    // A new turn, asked for by this message's author: earlier answers steered the turn they were given in.
    delete thread.instigatorIds;
    const interrupted = await closeEarlierCalls(thread);
    thread.messages.push(userMessage({ userId: item.userId, text: item.text }));
    thread.handledTs = [...(thread.handledTs ?? []), item.ts].slice(-HANDLED_TS_KEPT);
    // Saved before the model is asked, so the message (and any decision above) survives a crash.
    // Settled: closeEarlierCalls gave every call a result, and no call can be running elsewhere
    // while this item holds the thread, so no marker is left to pass for a later exchange's call.
    await scope.save(thread, { settled: true, audit: interrupted });
    await runAndPublish(scope, thread, item.userId);
  }

  /**
   * Finishes a turn a stopped process left: an answer it saved but did not post is posted; so is
   * the notice of its failure (a failed turn is run again only by Try again), or a card it never
   * posted; a history still waiting for the model is run again, after what the stopped process
   * started is recorded so it is not started twice.
   */
  async function continueInterrupted(scope: TurnScope, thread: ThreadState, requesterId: string): Promise<void> {
    // The turn went on to a step the approval hook decided and resumed here: run with its approvals.
    if (await resumer.finishInlineResume(scope, thread)) return;
    if (thread.outbox !== undefined) return postOutbox(scope, thread);
    if (await postUnpostedNotice(scope, thread)) return;
    if (thread.pendingStepId !== undefined) {
      await cards.postUnpostedCard(scope, thread);
      return;
    }
    const last = thread.messages.at(-1);
    if (!last || (last.role !== 'user' && last.role !== 'tool')) return;
    await options.closeInterruptedCalls(scope, thread);
    await runAndPublish(scope, thread, requesterId);
  }

  /**
   * Every call of the history gets a result before the new message: one whose executing marker
   * says it started (a turn whose last save failed, a process that stopped mid-turn) is told as
   * interrupted, and one a stopped turn started without saving is written in; only a call that
   * never started is told it did not run. Told "not run" of a call that ran, the model would ask
   * for it again, and a grant or auto-approve would run it twice. Returns the outcome records of
   * the calls told as interrupted, for the save that closes them (`interruptedCallRecords`).
   */
  async function closeEarlierCalls(thread: ThreadState): Promise<AuditEventInput[]> {
    // A new thread has no calls, and saves its store round trip.
    if (thread.messages.length === 0) return [];
    const markers = await store.executingCalls(thread.threadKey);
    const before = answeredCallIdsOf(thread.messages);
    const closed = closeUnansweredCalls(thread.messages, markers, 'Not run: the turn was interrupted before this call finished.');
    thread.messages = recordUnrecordedCalls(closed, markers);
    return interruptedCallRecords({ thread, before, markers });
  }

  /**
   * A newer message closes the open card, unless every call was already decided: then it resumes
   * first. The resumed turn may ask again, and the step it opens is settled the same way, so the
   * message never goes on past a live card (whose calls the model would be told did not run).
   */
  async function settlePendingStep(scope: TurnScope, thread: ThreadState, item: MessageWorkItem): Promise<void> {
    for (let resumes = 0; thread.pendingStepId !== undefined; resumes += 1) {
      const stepId = thread.pendingStepId;
      if (await supersede(scope, thread, { stepId, userId: item.userId })) return;
      // Decided before the message closed it: its approvers' decision stands and the turn runs.
      if (resumes === MAX_RESUMES_BEFORE_MESSAGE) throw new StepContendedError({ stepId, attempts: resumes + 1 });
      // The claim names this item (`ThreadState.inlineResume`): whoever takes it over finishes the resumed turn.
      if (!(await resumer.claimAndResume(scope, thread, stepId))) {
        delete thread.pendingStepId;
        return;
      }
      await scope.flush();
      Object.assign(thread, await loadThread(thread, scope));
    }
  }

  /** True when the open step was closed for the message; its calls are told so and its card says it. */
  async function supersede(scope: TurnScope, thread: ThreadState, { stepId, userId }: { stepId: string; userId: string }): Promise<boolean> {
    const superseded = await scope.lease.guard(() =>
      commitTransition(store, stepId, (step) => {
        const transition = supersedeTransition(step, { userId, now: now() });
        return transition && { ...transition, fence: scope.lease.fence };
      }, { onUnconfirmed: logUnconfirmedWithdrawal(logger) }),
    );
    if (!superseded) return false;
    // Results whose calls the history does not hold would have the model APIs refuse every later request.
    if (holdsCallsOf(thread, superseded)) thread.messages.push(closingToolMessage(superseded));
    delete thread.pendingStepId;
    await cards.refreshCard(scope, superseded);
    return true;
  }

  return handleMessage;
}

function holdsCallsOf(thread: ThreadState, step: PendingStep): boolean {
  const calls = toolCallIdsOf(currentExchange(thread.messages));
  return step.calls.every((call) => calls.has(call.toolCallId));
}
