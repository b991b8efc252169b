import { runTurn, TurnFailedError } from '../agent/run-turn.js';
import type { ApprovedRun, AutomaticApproval } from '../agent/tool-set.js';
import type { ThreadState } from '../store/thread-state.js';
import { postOutbox } from './answer-outbox.js';
import { createExecutionRecords } from './execution-records.js';
import { withFilteredNote } from './filtered-answer.js';
import { retriedFailureId } from './failed-turn.js';
import { createGrantLookup } from './grant-lookup.js';
import { createTurnStatus } from './turn-status.js';
import { createLiveAnswer, newShownAnswer, type ShownAnswer } from './live-answer.js';
import { mentionable } from './participants.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import type { StepCards } from './step-card.js';
import { createCurrentEvaluation } from '../approvals/evaluate-call-policy.js';
import { createApprovalHookConsultation, hookDecidingMark } from './consult-approval-hook.js';
import { scheduleAutoApproval } from './schedule-actor.js';
import { createThreadNotes } from './thread-notes.js';
import { createTurnFailure } from './turn-failure.js';
import { createUnansweredTurn, unansweredReason, withoutEmptyAnswer } from './unanswered-turn.js';
import { takingBackIfFenced, type TurnScope } from './turn-scope.js';
import { takeBackUnrecorded } from './unrecorded-post.js';
import { takeBackStream } from './stream-take-back.js';
import { trace } from '@opentelemetry/api';
import { inSpan } from '../tracing/trace-context.js';

type RunAndPublishDependencies = Pick<
  PhaseDependencies,
  'store' | 'audit' | 'model' | 'instructions' | 'tools' | 'policy' | 'toolProblems' | 'resolveGroups' | 'channelsOf' | 'limits' | 'logger' | 'now' | 'metrics' | 'approvalHook' | 'schedules' | 'tracer'
> & {
  cards: StepCards;
  /**
   * Resumes a step decided as it was opened (by the approval hook, or closed by countersign) in the
   * same turn, `soFar` (late-bound: resuming runs and publishes again).
   */
  resumeDecided: (scope: TurnScope, stepId: string, soFar: TurnSoFar) => Promise<void>;
};

/**
 * A turn going on in a round resumed at once, in the same work item: a step its last round opened
 * was decided as it was opened (the approval hook decided every call, or countersign closed them as
 * nobody could approve them). Those rounds are one turn, held to `agent.maxSteps` together: a model
 * that keeps asking for such calls would otherwise never stop. Anything else that runs the model
 * (a new message, Try again, a resume of a step people decided, even one resumed inside a message's
 * item) starts a turn of its own, with all of `agent.maxSteps`.
 */
export interface TurnSoFar {
  /** Model steps the turn's earlier rounds took. */
  stepsTaken: number;
}

export type RunAndPublish = (scope: TurnScope, thread: ThreadState, requesterId: string, approvedRuns?: ReadonlyMap<string, ApprovedRun>, soFar?: TurnSoFar) => Promise<void>;

/**
 * Running the model for a thread and showing what came of it: the answer, a card for calls that
 * wait for people, or a short notice when it failed. Every effect goes through the item's scope.
 */
export function createRunAndPublish(options: RunAndPublishDependencies): RunAndPublish {
  const { logger, limits, cards } = options;
  const records = createExecutionRecords(options);
  const notes = createThreadNotes(options);
  const recordTurnFailure = createTurnFailure(options);
  const recordUnansweredTurn = createUnansweredTurn(options);
  const grantsFor = createGrantLookup(options);
  // The hook's verdict is held to the expiry the config in force sets, as a click is.
  const consultApprovalHook = createApprovalHookConsultation({ ...options, currentEvaluation: createCurrentEvaluation({ policy: options.policy, tools: options.tools }) });

  async function runAndShow(scope: TurnScope, thread: ThreadState, requesterId: string, shown: ShownAnswer, approvedRuns?: ReadonlyMap<string, ApprovedRun>, soFar?: TurnSoFar): Promise<void> {
    const { messenger } = scope;
    const where = { channel: thread.channel, threadTs: thread.threadTs };
    const stepsBefore = soFar?.stepsTaken ?? 0;
    // A round resumed at once after the turn's last step: the decisions are in the history (the
    // resume claimed the step), the model is not asked again. Stopped at the limit as any turn is,
    // with its notice: Try again asks the model from here, and runs the approved calls not yet run.
    if (stepsBefore >= limits.maxSteps) {
      const answer = createLiveAnswer({ scope, thread, requesterId, shown, logger });
      const retryOf = retriedFailureId(thread.failedTurn);
      return recordUnansweredTurn(scope, thread, { reason: { kind: 'step-limit', steps: stepsBefore }, text: '', requesterId, answer, ...(retryOf === undefined ? {} : { retryOf }), ...(approvedRuns ? { approvedRuns } : {}) });
    }
    const status = createTurnStatus({ messenger, where, ...(limits.statusDelayMs === undefined ? {} : { delayMs: limits.statusDelayMs }) });
    status.show('is thinking…');
    await notes.noteToolProblems(scope, thread);
    const automatic: AutomaticApproval[] = [];
    const answer = createLiveAnswer({ scope, thread, requesterId, shown, logger });
    const startedAt = performance.now();
    const finished = (outcome: 'answered' | 'waiting' | 'failed') => options.metrics.turnFinished({ outcome, durationMs: performance.now() - startedAt });
    let outcome: Awaited<ReturnType<typeof runTurn>>;
    try {
      outcome = await runTurn({
        model: options.model,
        instructions: options.instructions,
        definitions: options.tools,
        policy: options.policy,
        messages: thread.messages,
        context: { requesterId, teamId: thread.teamId, channel: thread.channel, threadTs: thread.threadTs },
        maxSteps: limits.maxSteps - stepsBefore,
        // Ids of calls trimmed from the history are not in the prompt to be checked against.
        ...(thread.callIdsForgotten ? { freshToolCallIds: true } : {}),
        ...(limits.modelTimeoutMs === undefined ? {} : { modelTimeoutMs: limits.modelTimeoutMs }),
        ...(approvedRuns ? { approvedRuns } : {}),
        // Ends the turn (its model calls, its tools) the moment this process learns it was fenced.
        abortSignal: scope.lease.signal,
        // A tool that waited (for a command slot) checks again before it acts: the wait may have hidden a stall.
        assertHeld: () => scope.lease.assertHeld(),
        beforeExecute: (call) => records.markStarted(scope, thread, call),
        afterExecute: (report) => records.markFinished(scope, thread, report),
        // Told once a call's tool was invoked, so a call refused before its start is not noted as run.
        onAutomaticApproval: (approval) => automatic.push(approval),
        findGrant: grantsFor(thread, requesterId),
        ...optionalScheduleApproval(scheduleAutoApproval(options.schedules ?? [], requesterId)),
        onToolStart: (toolName) => status.show(`is running ${toolName}…`),
        onTextDelta: (delta) => answer.append(delta),
        onModelCall: (report) => options.metrics.modelCallFinished(report),
        tracer: options.tracer,
        traceContext: scope.traceContext,
      });
      scope.executions.push(...outcome.executions);
    } catch (error) {
      if (error instanceof TurnFailedError) scope.executions.push(...error.executions);
      // Fenced: another process has the thread; this one must not save, post or say anything.
      if (scope.lease.lost()) throw error;
      finished('failed');
      // Calls that ran without a card before the failure ran all the same: the thread is told, as after a turn that ends well.
      await notes.noteAutomaticApprovals(scope, thread, automatic);
      return recordTurnFailure(scope, thread, { error, requesterId, answer, ...(approvedRuns ? { approvedRuns } : {}) });
    } finally {
      // The turn is over: what it wrote is shown whole from here, or (failed) through `openNow`,
      // after its status line, never under it.
      answer.stopOpening();
      await status.end();
    }
    const steps = stepsBefore + outcome.steps;
    const waiting = outcome.approvalRequests.length > 0;
    // Stopped at the step limit, or nothing to show, and nobody to ask: without a notice the thread
    // would go quiet, or take the model's commentary on its way for its answer.
    // Judged by what the thread would show: text that renders to nothing posts nothing.
    const showsNothing = (markdown: string) => messenger.answerShowsNothing({ markdown });
    const unanswered = waiting ? undefined : unansweredReason({ responseMessages: outcome.responseMessages, text: outcome.text, maxSteps: limits.maxSteps, stepsBefore, showsNothing, cutOff: outcome.cutOff });
    finished(waiting ? 'waiting' : unanswered ? 'failed' : 'answered');
    thread.messages.push(...(unanswered ? withoutEmptyAnswer(outcome.responseMessages, { showsNothing }) : outcome.responseMessages));
    const retryOf = retriedFailureId(thread.failedTurn);
    delete thread.failedTurn;
    await notes.noteAutomaticApprovals(scope, thread, automatic);
    if (unanswered) return recordUnansweredTurn(scope, thread, { reason: unanswered, text: outcome.text, requesterId, answer, ...(retryOf === undefined ? {} : { retryOf }) });
    if (!waiting) {
      thread.outbox = outcome.filtered ? withFilteredNote({ text: outcome.text, messenger }) : outcome.text;
      try {
        await scope.save(thread, { settled: true });
        for (const each of thread.answerTs ?? []) shown.recorded.add(each);
      } catch (error) {
        // Shown but not remembered: marked as cut off, so no one mistakes it for an answer the bot knows it gave.
        if (!scope.lease.lost()) await answer.stream?.finish(`${answer.streamed} …`).catch(() => {});
        throw error;
      }
      await inSpan({ tracer: options.tracer, name: 'countersign.answer', parent: scope.traceContext }, () => postOutbox(scope, thread, answer.stream, shown.recorded));
      return;
    }
    // The text before the card is shown in full first; a crash before the step is saved re-runs the
    // turn. So does the thread's new holder when that save is refused as fenced: a whole post, on
    // record nowhere, is then taken back, or the text would stand twice (a stream's messages are
    // taken back below, once the turn ends).
    let takeBack: (() => Promise<void>) | undefined;
    if (answer.stream) await answer.stream.finish(outcome.text);
    else if (outcome.text.trim()) {
      const posted = await messenger.postAnswer({ ...where, markdown: outcome.text, mentionableUserIds: mentionable(thread), ...(thread.answerTs ? { replacing: thread.answerTs } : {}) });
      takeBack = takeBackUnrecorded(scope, { channel: thread.channel, threadKey: thread.threadKey, posted, recorded: thread.answerTs ?? [] });
    }
    delete thread.answerTs;
    const step = await inSpan({ tracer: options.tracer, name: 'countersign.card', parent: scope.traceContext, attributes: { 'countersign.calls': outcome.approvalRequests.length } }, async (traceContext) => {
      // The step remembers this span: the decision and the resumed turn join its trace.
      const cardScope = { ...scope, traceContext };
      // Once the turn has taken its steps, a hook's approval could not run in it: people decide, and their decision resumes a turn of its own.
      const asksHook = steps < limits.maxSteps;
      // Marked while the hook decides, so App Home (which lists the step at once) takes no click meanwhile.
      const marks = asksHook ? hookDecidingMark({ hook: options.approvalHook, now: options.now() }) : {};
      // Named when the text is taken back: a resend after a lost reply is answered as written, not fenced.
      const opened = await takingBackIfFenced(takeBack, (named) => cards.openStep(cardScope, thread, requesterId, outcome.approvalRequests, { marks, ...named }));
      trace.getSpan(traceContext)?.setAttribute('countersign.step_id', opened.stepId);
      // The hook decides before the card exists, so no click races it; the card then shows what it decided.
      const decided = asksHook ? await consultApprovalHook(cardScope, opened) : opened;
      await cards.postCardFor(cardScope, decided);
      return decided;
    });
    if (step.phase === 'complete') await options.resumeDecided(scope, step.stepId, { stepsTaken: steps });
  }

  /**
   * Runs the turn and shows its outcome. If this process turns out to have been fenced meanwhile,
   * answer messages it posted but never recorded are removed: the process that took the thread
   * over did not know them and wrote the answer again, so they would be a second answer.
   */
  return async (scope, thread, requesterId, approvedRuns, soFar) => {
    const shown = newShownAnswer(thread.answerTs);
    try {
      await runAndShow(scope, thread, requesterId, shown, approvedRuns, soFar);
    } catch (error) {
      // Not when Redis lost the thread's state: no new holder shows the answer again, so what was shown stays.
      if (scope.lease.lost() && !scope.lease.stateLost()) await takeBackStream({ scope, store: options.store, thread, shown, logger });
      throw error;
    }
  };
}

function optionalScheduleApproval(scheduleApproval: ReturnType<typeof scheduleAutoApproval>) {
  return scheduleApproval ? { scheduleApproval } : {};
}
