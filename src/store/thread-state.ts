import type { ModelMessage } from 'ai';
import type { ApprovedRun } from '../agent/tool-set.js';

export const THREAD_STATE_SCHEMA_VERSION = 1;

/** Everything the bot remembers about one Slack thread it follows. */
export interface ThreadState {
  schemaVersion: typeof THREAD_STATE_SCHEMA_VERSION;
  threadKey: string;
  teamId: string;
  channel: string;
  threadTs: string;
  /** The model conversation, JSON-safe. Untrusted on load: validated before use. */
  messages: ModelMessage[];
  /** The step whose card is open, if the turn is paused. */
  pendingStepId?: string;
  /** `ts` of the latest human messages already in `messages`, so a re-delivered item is not added twice. */
  handledTs?: string[];
  /**
   * A step resumed inside a work item that is not the step's own resume item, saved with its claim:
   * a message that found the step decided (`settlePendingStep`), or a turn whose every call the
   * approval hook decided (`resumeDecided`, in a message's, a resume's or a Try again's item).
   * `in`: that item (`workItemKey`). A process that takes the item over finishes the resumed turn
   * first (`finishInlineResume`: its answer shown, its approved calls run), since the step's own
   * resume item finds it resumed and the item's own recovery knows nothing of its approvals.
   * Dropped once that turn's answer is shown, by the next claim and by a message's take-in. One
   * left behind (that turn failed, or ended in a card) is harmless: finishing the turn again
   * shows only what was never shown, and finding nothing, the item recovers as it would without it.
   */
  inlineResume?: { stepId: string; in: string };
  /**
   * An answer saved but not yet posted: a process that dies before posting leaves it for the one
   * that takes its work item over. It never outlives that item: a post Slack refuses drops it (the
   * thread is told the item failed), and a new turn drops one left over.
   */
  outbox?: string;
  /**
   * Messages an answer was being shown in when it was last saved. A process that dies mid-answer
   * leaves them half written; the next showing of that answer rewrites them instead.
   */
  answerTs?: string[];
  /**
   * The notice of a turn its policy ended at the claim of its resume (every call expired, `onExpiry:
   * stop`), or that could not go on because its thread lost its saved state (`lost-thread.ts`): saved
   * with that claim, removed once posted. The process that takes the resume over after
   * a stop in between posts it (the history alone reads as a resume to go on with), and the model is
   * not asked. A later claim and a message's take-in drop one left over, as they drop an outbox.
   */
  unpostedStopNotice?: string;
  /** The turn that failed last, while it can still be tried again (Try again); see `FailedTurn`. */
  failedTurn?: FailedTurn;
  /**
   * Failures (`FailedTurn.id`) whose Try again was taken in, latest last, so a retry item a stopped
   * process left is finished by the next one (its answer or card shown) instead of told "nothing to retry".
   */
  retriedFailureIds?: string[];
  /**
   * People who took part in the thread (wrote in it, decided on its cards). The model may mention
   * them; anyone else it names is shown as text that notifies nobody.
   */
  participants?: string[];
  /**
   * People other than the requester whose answers or deny reasons steered the current turn (see
   * `PendingStep.instigatorIds`): the steps the turn opens from then on record them. A new message
   * starts a new turn, without them; Try again goes on with the same turn, with them.
   */
  instigatorIds?: string[];
  /**
   * Set once the history lost messages (trimmed to `history.maxMessages`/`maxBytes`, or dropped as
   * unreadable): the ids of calls it held are no longer there to compare with, so every call the
   * model makes from then on gets a fresh id (see `withUniqueToolCallIds`). Ids key the idempotency
   * key, the executing marker and the audit records, so a server's `call_1` must never be reused.
   */
  callIdsForgotten?: true;
  /** Tool-source problems already reported in this thread, so each is said once. */
  notedProblems?: string[];
  /** Epoch milliseconds. */
  updatedAt: number;
}

/** A turn that failed: Try again runs it again for the same requester, whoever clicks. */
export interface FailedTurn {
  /** On the Try again button, so a click can only retry the failure it was shown with. */
  id: string;
  requesterId: string;
  /** Epoch milliseconds. */
  at: number;
  /**
   * Approved calls the failed turn had not started: Try again runs them with the version their
   * approvers signed, once their approvals are checked again against the step they were given in.
   * A new message instead closes them unrun, on their steps too (`createCarriedApprovalsClosing`).
   */
  approvedCalls?: CarriedApproval[];
  /**
   * Set in the save that takes Try again in, until the retried turn ends (answered, waiting on a card,
   * or failed again): the failure stays, so a process that takes the retry over runs the same turn,
   * with the approved runs the first judged, instead of finding nothing to retry.
   */
  retrying?: { approvedRuns: RetriedRun[] };
  /** Set when this turn was Try again of that failure (`FailedTurn.id`): the retry item it ran in is that failure's. */
  retryOf?: string;
  /**
   * The failure notice, saved with the failure and removed once it is posted: a process that takes
   * the turn's item over (a message, a resume, a retry) posts it, since only it offers Try again for
   * this failure; without it the thread would never hear the turn failed.
   */
  unpostedNotice?: string;
}

/** An approved call Try again runs, as judged when the retry was taken in (see `judgeCarriedApprovals`). */
export interface RetriedRun {
  toolCallId: string;
  run: ApprovedRun;
}

/** An approval a failed turn held for a call it had not started: which call, which input version, who signed. */
export interface CarriedApproval {
  toolCallId: string;
  toolName: string;
  stepId: string;
  approvalId: string;
  version: number;
  inputHash: string;
  approvedBy: string[];
}

export interface ThreadAddress {
  teamId: string;
  channel: string;
  threadTs: string;
}

/** A thread the bot has just started following: no history yet. */
export function newThreadState(address: ThreadAddress, now: number): ThreadState {
  return {
    schemaVersion: THREAD_STATE_SCHEMA_VERSION,
    threadKey: threadKeyOf(address),
    teamId: address.teamId,
    channel: address.channel,
    threadTs: address.threadTs,
    messages: [],
    updatedAt: now,
  };
}

export function threadKeyOf(address: ThreadAddress): string {
  return `${address.teamId}:${address.channel}:${address.threadTs}`;
}
