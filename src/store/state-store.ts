import type { AuditEventInput } from '../audit/audit-event.js';
import type { Grant } from '../approvals/grant.js';
import type { CardCopy, PendingStep } from '../approvals/pending-step.js';
import type { StepTransition } from '../approvals/transitions/step-transition.js';
import type { UnconfirmedCardPost } from '../errors/countersign-error.js';
import type { ThreadState } from './thread-state.js';

/**
 * A thread holder's fencing token. Every lock acquisition gets a token of its own, counting on from
 * the last (`fencing-token.ts`); a write guarded by a fence happens only while its token is still the
 * thread's newest, so a process that stalled past its lock (a GC pause, a frozen VM) can no longer
 * change anything once another process took the thread over.
 */
export interface Fence {
  threadKey: string;
  token: string;
}

/**
 * Where a fencing token stands. `current`: it is the thread's newest. `taken`: another token is
 * (another process took the thread). `missing`: the thread has no token at all: Redis lost it (a
 * restart without persistence, a failover to a replica that never had it), so nobody else holds
 * the thread, but nothing this holder saved is there either and no write under the token is taken.
 */
export type FenceState = 'current' | 'taken' | 'missing';

/**
 * `committed`: written. `conflict`: the step changed since it was read; read it again and judge
 * again. `not-found`: no such step. `fenced`: the caller's fencing token is no longer current.
 * `expired`: the store's clock (Redis's `TIME`) was at or past the transition's `deadline`; nothing written.
 */
export type CommitResult = 'committed' | 'conflict' | 'not-found' | 'fenced' | 'expired';

/**
 * A write that withdrew authority (a step commit that `withdraws`, a grant's revoke) stands on the
 * primary, but fewer replicas than required confirmed it within the wait (the executing marker's
 * `COUNTERSIGN_REDIS_WAIT_*`), or the primary did not confirm it in its append-only file (`onDisk`):
 * a Redis failover or restart now could lose it, and what it withdrew would be back. The person who
 * withdrew it is told so, not that it is done.
 */
export interface ReplicaShortfall {
  /** Replicas that had to confirm it. */
  wanted: number;
  /** Replicas that did within the wait. */
  confirmed: number;
  /** False: the primary's append-only file did not have it fsynced within the wait (`WAITAOF`); absent when not asked or it did. */
  onDisk?: false;
}

/** A step commit's result; `unconfirmed` only on a committed withdrawal that replicas did not confirm in time. */
export interface StepCommit {
  result: CommitResult;
  unconfirmed?: ReplicaShortfall;
}

/** A tool call that started: written just before it runs, so recovery knows it may have run. */
export interface ExecutingMarker {
  toolName: string;
  input: unknown;
  /** Epoch milliseconds. */
  startedAt: number;
  /** Set once the call returned (or threw). */
  finishedAt?: number;
}

/** A step and a thread, read together. */
/** What `setStepCard` found: the step's revision and the ts of the thread card on record. */
export interface RecordedCard {
  revision: number;
  cardTs: string;
}

export interface StepAndThread {
  step: PendingStep | undefined;
  thread: ThreadState | undefined;
}

/** What a resume reads first, read ahead with the lock that lets it run (`lockAndTake`). */
export interface PrefetchedStep extends StepAndThread {
  stepId: string;
}

/** What the caller that took a thread's lock with its enqueue handles first. */
export interface WorkClaim {
  token: string;
  /** In flight until `finishWork`. */
  item: string;
  /**
   * The item was in flight already: a holder whose lock lapsed took it and never finished it
   * (stopped, or stalled past its lock), so what it did after its last write, such as drawing a
   * card, may never have happened.
   */
  leftover?: true;
}

/**
 * A thread save that may record an effect the caller takes back should the save be refused as
 * fenced (a posted answer): `attempt`, a name the caller draws once for the write and sends with
 * every try of it. The same write sent again (by the client after a lost reply, or by the caller)
 * once it ran is answered as written and not run again, even after another process took the
 * thread: a refusal as fenced then means it was never written.
 */
export interface NamedWrite {
  attempt?: string;
}

/**
 * For a holder that is stopping (`ThreadWorker.stopTaking`): `handBack` releases the thread's lock
 * even with work left, and leaves that work (queued, or in flight but not started) where it is for
 * another process, offering the thread to the workers (`nextReadyThreads`) as `handOffWork` does, so
 * a live one takes it at once. Its lock deleted, not left to lapse: nobody waits out its TTL.
 */
export interface HandBack {
  handBack?: boolean;
}

/** A work item's last save of its thread, sent with `finishWork` to spare a round trip. */
export interface ClosingSave {
  thread: ThreadState;
  ttlMs: number;
  settled?: boolean;
}

/** Deliveries Slack may repeat (retries, the `message` + `app_mention` pair). */
export interface DeliveryStore {
  /**
   * Marks every key as seen by this claimant; true only when none of them was seen before by
   * another (first delivery). The claimant (a fresh token per call unless given) is what lets a
   * write Redis ran but whose reply was lost, resent by the client, count as this call's own rather
   * than as a duplicate that drops the message in silence.
   */
  claimOnce(keys: string[], ttlMs: number, options?: { claimant?: string }): Promise<boolean>;
  /** Remembers for `ttlMs` that a post was deleted, so a queued item for it is not taken in. */
  markDeleted(post: DeletedPost, ttlMs: number): Promise<void>;
  /** Whether the post was deleted (within the TTL `markDeleted` was given). */
  wasDeleted(post: DeletedPost): Promise<boolean>;
}

/** A Slack post, as the channel and ts of the message its author deleted. */
export interface DeletedPost {
  channel: string;
  ts: string;
}

export type ScheduleKind = 'expiry' | 'reminder' | 'escalation';

/** A reminder one sender took (`claimReminder`). */
export interface ReminderClaim {
  /** When it was due: later than the step's `remindAt` when an earlier try left it (or a newer release put it off). */
  dueAt: number;
  /** When it is due again unless finished. */
  until: number;
  /** The sender's: only it keeps (`keepReminder`), finishes or lets go of the claim. */
  claimant: string;
}

/** Pending steps: written only through transitions computed from the step as read. */
export interface StepStore {
  /**
   * Stores a new step, the thread that now points at it, its schedules (expiry, reminder, first
   * escalation hop) and its `approval-requested` events, in one atomic write under the thread's
   * fence. Throws `FencedError` when fenced. `attempt` names the write (`NamedWrite`): the thread
   * it saves may record a post (the text before the card). Unnamed, a store that can see the write
   * sent twice (Redis: ioredis's resend after a lost reply) names it itself, so the step and its
   * `approval-requested` records are written once. Both are kept `ttlMs` (`stepRecordTtlMs`:
   * past the step's deadline), and no later save of the thread shortens that while the thread still
   * names the step (`pendingStepId`); its resume claim (`commitStepWithThread`) ends that.
   */
  createStep(options: { step: PendingStep; thread: ThreadState; ttlMs: number; audit: AuditEventInput[]; fence: Fence } & NamedWrite): Promise<void>;
  getStep(stepId: string): Promise<PendingStep | undefined>;
  /** A step and a thread read together, in one round trip where the store can (what a resume reads first). */
  getStepAndThread(stepId: string, threadKey: string): Promise<StepAndThread>;
  /**
   * Records the thread card's ts (and its permalink, for the copies to link to), unless the step
   * has a card on record already: a step has one thread card, and a second one (posted by a
   * process that stalled between its post and this record, while another posted the card again)
   * is not recorded over it. Returns the step's revision and the card on record as they are now
   * (undefined when the step is gone): a newer revision than the card showed means a decision came
   * before the card's ts was known, and could not update the card; another card means this one
   * is not the step's (the same ts again, as a resend, is).
   */
  setStepCard(stepId: string, cardTs: string, link?: string): Promise<RecordedCard | undefined>;
  /**
   * Records `to` as the thread card in place of `from` (and `link` as its permalink, or none), only
   * while `from` is the card on record: a card Slack would not update for good is posted again, and
   * the new one is the step's from then on. False when the step is gone or has another card; true
   * when `to` is on record already (a resend after a lost reply).
   */
  replaceStepCard(stepId: string, cards: { from: string; to: string; link?: string }): Promise<boolean>;
  /**
   * Records a copy of the card outside the thread (one per channel), outside the step's revision:
   * from then on clicks on it count, and every change is shown on it. Unless the step has a copy in
   * that channel on record already: two processes that read the step without it (a recorded edit's
   * copies, a card refresh's) each post one, and the first recorded is the step's. Returns the copy
   * on record in that channel now (another one means this one is not the step's; the same one again,
   * as a resend, is), or undefined when the step is gone (nothing recorded).
   */
  recordCardCopy(stepId: string, copy: CardCopy): Promise<CardCopy | undefined>;
  /**
   * Writes a transition if the step is still at `transition.fromRevision` (and the fence, if any,
   * is current), with its audit events and grant, atomically. A transition that `withdraws`
   * authority waits for the replicas too (see `ReplicaShortfall`). `attempt` (a fresh token per
   * call unless given) names this write: sent again after its reply was lost, it answers
   * 'committed', not 'conflict' with its own decision (as `commitStepAndQueue`'s does). A failure
   * before the write is sent (the grant's clock read, the persistence read) throws
   * `WriteNotSentError`: nothing was written (the memory store has no such step, so never does).
   */
  commitStep(transition: StepTransition, options?: { attempt?: string }): Promise<StepCommit>;
  /**
   * `commitStep` and, when the transition completes the step, `resume.item` queued for the step's
   * thread in the same atomic write, so a decision that completes a step never stands without its
   * resume. `drain`: a free thread lock is taken, and the claim says the caller must drain (its
   * first item already in flight); `hand-off`: a free thread is offered to the workers.
   * `attempt` (a fresh token per call unless given) names this write, as `claimOnce`'s claimant
   * does: the same write sent again after its reply was lost answers as it did the first time
   * (committed, with the claim while its lock is still held), not as a conflict with itself.
   */
  commitStepAndQueue(transition: StepTransition, resume: { item: string; lockTtlMs: number; mode: 'drain' | 'hand-off'; attempt?: string }): Promise<StepCommit & { claim?: WorkClaim }>;
  /**
   * `commitStep` and `saveThread` as one atomic write under the transition's fence (required):
   * both or neither. For a resume claim (`claimResumeTransition`: no grant), whose thread records
   * what was decided: no process can hold a claimed step its thread does not show. Its audit events
   * (an approval the re-check turned into a denial) are written with it, so no claim stands unaudited.
   * The thread is kept `ttlMs` as `saveThread` keeps it; the step, resumed, no longer than that.
   */
  commitStepWithThread(options: { transition: StepTransition; thread: ThreadState; ttlMs: number; settled?: boolean } & NamedWrite): Promise<CommitResult>;
  /** Steps whose expiry (or reminder, or next escalation hop) time has come, oldest first. */
  dueSteps(options: { kind: ScheduleKind; now: number; limit: number }): Promise<string[]>;
  /** Takes a step that can no longer expire, remind or escalate (closed, or gone) off every schedule. */
  unschedule(stepId: string): Promise<void>;
  /**
   * Puts a step's next escalation hop on the schedule at `at`, or takes it off (undefined). Only an
   * index for the sweep: the hop itself is a transition, so a stale entry costs a no-op sweep.
   */
  scheduleEscalation(stepId: string, at: number | undefined): Promise<void>;
  /**
   * Puts a step's entry on the `kind` schedule off until `until`: only an entry still there and due
   * earlier (one another process took off or moved later stays as it is). For a step this process
   * cannot read (`NewerSchemaError`): its schedule is left for one that can, out of the way meanwhile.
   */
  postponeDue(options: { kind: ScheduleKind; stepId: string; until: number }): Promise<void>;
  /**
   * Claims a reminder due by `now` for its sender, for exactly one caller (undefined for the others):
   * its entry is moved to `until`, when the reminder comes due again unless the sender finishes it
   * (`finishReminder`): a sender that stopped, or that Slack failed, leaves it for a later sweep.
   * Until then the claim is a lease of `leaseMs` by the store's clock, from this call: while it lasts
   * (`keepReminder` renews it) nobody else claims the reminder, even once `until` has passed.
   * `claimant`: a claim made again with the same one (a resend after a lost reply) is the same claim.
   */
  claimReminder(options: { stepId: string; now: number; until: number; leaseMs: number; claimant?: string }): Promise<ReminderClaim | undefined>;
  /**
   * Whether the claim is still its sender's (its lease has not run out, or nobody took the reminder
   * since); if so its lease is renewed for `leaseMs` from now by the store's clock.
   */
  keepReminder(stepId: string, claim: ReminderClaim, leaseMs: number): Promise<boolean>;
  /** Lets go of a claim before its lease runs out: the reminder comes due again at its `until` (a later sweep tries again). */
  releaseReminder(stepId: string, claim: ReminderClaim): Promise<void>;
  /**
   * Takes a claimed reminder off the schedule while it is still at the claim's `until` (one an edit put
   * back on since stays), and lets go of the claim.
   */
  finishReminder(stepId: string, claim: ReminderClaim): Promise<void>;
  /** Steps every call of which is decided but that no process has resumed, completed before `before`. */
  completedSteps(options: { before: number; limit: number }): Promise<string[]>;
  /**
   * Has `completedSteps` list a decided step only from `until` on, as if completed then: only an
   * entry still there and earlier (one a resume claim took off stays off). For a step whose resume
   * this release cannot run (its step or thread a newer release stored): left for a process that
   * can, out of the way of the recovery sweep's batch meanwhile.
   */
  postponeCompleted(options: { stepId: string; until: number }): Promise<void>;
  /** Open steps of a channel, newest first (for `/countersign pending`); closed ones are dropped. */
  listPendingSteps(options: { teamId: string; channel: string; limit: number }): Promise<PendingStep[]>;
  /**
   * Open steps of a workspace across its channels, newest first, at most `limit` (App Home, the
   * pending-approvals gauge). A step leaves the index in the write that closes it.
   */
  listOpenSteps(options: { teamId: string; limit: number }): Promise<PendingStep[]>;
  /** Workspaces that had open steps (some may have none left): what the pending gauge reads. */
  teamsWithOpenSteps(): Promise<string[]>;
}

export interface GrantStore {
  /**
   * Live grants of a channel, oldest first, by the store's clock (Redis's `TIME`, the one their ends
   * were stamped by, the one every replica's call start under them is judged by); the grants over by
   * it are removed as a side effect. What everything that shows or revokes grants reads.
   *
   * `hideEndedBy`, the reader's clock, also leaves out a grant that clock thinks over, removing
   * nothing. Only for the turn's own lookup that lets a call skip its card: a reader whose clock runs
   * fast then fails closed for itself (it asks with a card). Never for a list or a Revoke: there it
   * would hide a grant that still runs every other replica's calls, so its Revoke would answer
   * "already expired" and write nothing, and the grant would live on (revoking would fail open).
   */
  listGrants(options: { teamId: string; channel: string; hideEndedBy?: number }): Promise<Grant[]>;
  /**
   * Live grants of a workspace across its channels, oldest first (App Home's lists and Revoke), by the
   * store's clock only, as `listGrants` without `hideEndedBy`.
   */
  listTeamGrants(options: { teamId: string }): Promise<Grant[]>;
  /**
   * Removes a grant and writes `audit` in the same atomic operation; undefined when it was gone.
   * A withdrawal: it waits for the replicas as a `withdraws` step commit does. A failure before
   * its write is sent (the grant's read, the persistence read) throws `WriteNotSentError`: nothing
   * was written (never from the memory store, which reads nothing first).
   */
  revokeGrant(options: { teamId: string; channel: string; grantId: string; audit: (grant: Grant) => AuditEventInput }): Promise<RevokedGrant | undefined>;
}

/** A grant as it was when revoked; `unconfirmed` when replicas did not confirm the revoke in time. */
export interface RevokedGrant {
  grant: Grant;
  unconfirmed?: ReplicaShortfall;
}

/** What the bot remembers per thread. Writes of a turn are fenced; see `Fence`. */
export interface ThreadStore {
  getThread(threadKey: string): Promise<ThreadState | undefined>;
  /**
   * A thread and whether a post in it was deleted (see `wasDeleted`), read together: one round trip
   * where the store can (what a message's take-in reads first).
   */
  getThreadAndDeletion(threadKey: string, post: DeletedPost): Promise<{ thread: ThreadState | undefined; deleted: boolean }>;
  /**
   * Saves the thread while `fence` is current; throws `FencedError` otherwise. `settled` says every
   * call that started in this thread now has its result in the history, so the markers can go.
   * `audit`: events of what the save records (an approval withdrawn, a call interrupted), written
   * in the same write, once: a store that can see the save sent twice names a save with records
   * itself. `attempt` names the save (`NamedWrite`). The thread is kept `ttlMs` from now; while it names a
   * waiting step (`pendingStepId`), longer if it already was (`createStep`). Once nothing waits in
   * it, `ttlMs` stands again, shorter or not.
   */
  saveThread(thread: ThreadState, ttlMs: number, fence: Fence, options?: { settled?: boolean; audit?: readonly AuditEventInput[] } & NamedWrite): Promise<void>;
  /** Starts following a thread unless it already is; never overwrites an existing history. */
  createThreadIfAbsent(thread: ThreadState, ttlMs: number): Promise<boolean>;
  /**
   * Written just before a tool runs, with its `tool-started` event, while `fence` is current
   * (throws `FencedError` otherwise): after a crash or a stall, a call with a marker and no result
   * may have run, so it is never run again.
   */
  markExecuting(options: { fence: Fence; toolCallId: string; marker: ExecutingMarker; ttlMs: number; audit: AuditEventInput[]; grant?: GrantLocation }): Promise<MarkExecutingResult>;
  /** The call returned: the marker says so and the `tool-executed` event is written, together. Not fenced: it happened. */
  finishExecuting(options: { threadKey: string; toolCallId: string; marker: ExecutingMarker; audit: AuditEventInput }): Promise<void>;
  executingCalls(threadKey: string): Promise<Map<string, ExecutingMarker>>;
}

/**
 * A message a process that lost its thread posted, on record nowhere, that Slack would not remove
 * when it tried (an outage, rate limits): kept so the removal is tried again, by that process for a
 * few seconds and then by any process's sweep, even once it has stopped (see
 * `conversation/message-take-back.ts`).
 */
export interface PendingTakeBack {
  channel: string;
  ts: string;
  /** The thread it was posted in: an answer's messages are on record in its `answerTs`. */
  threadKey: string;
  /** Set for a step's card: on record as the step's `cardTs` instead. */
  stepId?: string;
  /** When it was first found not removed (epoch ms): tries end a day after. */
  since: number;
}

/** Take-backs Slack did not complete, kept until they are. */
export interface TakeBackStore {
  /** Keeps `takeBack` due at `at` (epoch ms); one kept already is then due at `at`. */
  scheduleTakeBack(takeBack: PendingTakeBack, at: number): Promise<void>;
  /**
   * Makes one still kept due at `until`: true when this call moved it, false when it is forgotten
   * (never kept again by this) or already due then. For a later time a try asks for (a Retry-After).
   */
  postponeTakeBack(takeBack: PendingTakeBack, until: number): Promise<boolean>;
  /**
   * A sweep's claim on one for its try: makes it due at `until` only while it is still kept and due
   * by `now`, atomically. False when it is forgotten, or not due (another sweep claimed it first,
   * whatever `until` it chose), so two sweeps that read it due never both try it.
   */
  claimTakeBack(takeBack: PendingTakeBack, options: { now: number; until: number }): Promise<boolean>;
  /** Take-backs due by `now`, earliest first, at most `limit`. */
  dueTakeBacks(options: { now: number; limit: number }): Promise<PendingTakeBack[]>;
  /** Forgets it; true only for the call that removed it, so its end is reported once. */
  forgetTakeBack(takeBack: PendingTakeBack): Promise<boolean>;
}

/**
 * A step whose thread card Slack would not update (a rate limit past the client's retries, an
 * outage, a refusal): kept so the card is drawn again from the step as it is then, by the process
 * that failed for a few seconds and then by any process's sweep, until it is (see
 * `approvals/card-refreshes.ts`). Without it the card would show a state the server no longer
 * judges clicks by until the step changes again.
 */
export interface PendingCardRefresh {
  stepId: string;
  /**
   * When the card's update first failed (epoch ms): tries end a day after. For a refresh carrying an
   * `unconfirmed` card, when that card was posted: it gets the full day to be found, however long the
   * update had failed before it (else one look, in the same outage, and a card Slack posted kept live
   * buttons for good).
   */
  since: number;
  /**
   * The card this refresh posted again, when whether Slack posted it is not known: it is looked for
   * before anything else, and recorded or taken back when found; no other card is posted meanwhile.
   */
  unconfirmed?: UnconfirmedRepost;
}

/**
 * A card posted again, or a step's first card, whose post's outcome is not known
 * (`CardPostUnconfirmedError`), and what to do with it once found.
 */
export interface UnconfirmedRepost extends UnconfirmedCardPost {
  /**
   * The step's card it was posted in place of: it is recorded only over that one. None for the step's
   * first card: it is recorded only while the step has no card.
   */
  replacing?: string;
  /** The step's revision it was drawn from. */
  revision: number;
  /** Where it may stand: where it is looked for, and taken back from if its step is gone. */
  channel: string;
  threadTs: string;
  threadKey: string;
  /**
   * The card (its ts), found (or posted again, its post answered: `mark` and `text` empty, nothing to
   * look for) and recorded as the step's card by this refresh's sweep, when the thread could not be
   * told then: only the notice is left, owed by this record alone (a sweep that finds the card on
   * record from a refresh without it says nothing: another sweep recorded it and tells).
   */
  recorded?: string;
}

/** Card refreshes Slack did not complete, kept until they are: the take-backs' pattern (`TakeBackStore`). */
export interface CardRefreshStore {
  /** Keeps `refresh` due at `at` (epoch ms); one kept already is then due at `at`. */
  scheduleCardRefresh(refresh: PendingCardRefresh, at: number): Promise<void>;
  /** As `postponeTakeBack`: true when this call moved one still kept (for a later time a try asks for). */
  postponeCardRefresh(refresh: PendingCardRefresh, until: number): Promise<boolean>;
  /** As `claimTakeBack`: a sweep's claim on one still kept and due by `now`, for its try. */
  claimCardRefresh(refresh: PendingCardRefresh, options: { now: number; until: number }): Promise<boolean>;
  /** Refreshes due by `now`, earliest first, at most `limit`. */
  dueCardRefreshes(options: { now: number; limit: number }): Promise<PendingCardRefresh[]>;
  /** Forgets it; true only for the call that removed it. */
  forgetCardRefresh(refresh: PendingCardRefresh): Promise<boolean>;
}

/**
 * The grant a call was cleared by, for `markExecuting` to check in the same write as the marker:
 * unless it is still stored in the thread's team and channel and its `expiresAt` is still ahead by
 * the store's clock (Redis's `TIME`, not the caller's), nothing is written and the call must not
 * start, so a revoke or the grant's end lands strictly before the start or after it.
 */
export interface GrantLocation {
  teamId: string;
  channel: string;
  grantId: string;
}

/** 'grant-gone': the call's grant was revoked or expired; no marker or audit was written. */
export type MarkExecutingResult = 'marked' | 'grant-gone';

/** Per-thread work queues and the thread lock with its fencing token. */
export interface WorkQueueStore {
  /**
   * Appends work for a thread and tries to take the thread's lock in the same atomic operation.
   * When this caller took the lock it must drain the queue: the claim carries the new fencing
   * token and the first item to handle, already in flight (as `takeWork` would return it, so a
   * dead holder's item comes first). Undefined when another holder will drain it. The same
   * `attempt` sent again (a lost reply) queues nothing twice and answers as the first did.
   */
  enqueueWork(threadKey: string, item: string, lockTtlMs: number, options?: { attempt?: string }): Promise<WorkClaim | undefined>;
  /**
   * Appends work for a thread without taking its lock, for a process that only receives (its event
   * loop acks Slack and runs no turns). When no one holds the thread, its key is offered to the
   * workers (`nextReadyThreads`); a hint that is lost costs only latency: the recovery sweep finds
   * every thread with a free lock whose work has waited past its grace. The same `attempt` sent again (a lost reply) queues
   * nothing twice.
   */
  handOffWork(threadKey: string, item: string, options?: { attempt?: string }): Promise<void>;
  /**
   * Waits up to `timeoutMs` for threads handed off to the workers and takes up to `max` of them
   * (none when the wait ran out); each hint goes to one caller. `signal` aborted: the wait ends at
   * once with none (a stopping worker need not sit out its last wait), and a hint popped for it
   * afterwards goes back to its list.
   */
  nextReadyThreads(options: { timeoutMs: number; max: number; signal?: AbortSignal }): Promise<string[]>;
  /**
   * Puts hints taken with `nextReadyThreads` back at the head of their lists, in their order, for
   * another worker: a worker that took them and then found it had no room to start them.
   */
  returnReadyThreads(threadKeys: readonly string[]): Promise<void>;
  /** Takes a thread's lock if nobody holds it (to pick up work a dead process left). */
  tryLock(threadKey: string, ttlMs: number): Promise<string | undefined>;
  /**
   * `tryLock` and `takeWork` in one atomic step, for a worker picking up a thread: the token, and
   * the item to handle first (in flight) unless the queue was empty. When that item resumes a step,
   * a store may read the step and its thread in the same step (`read`), after the lock was taken.
   */
  lockAndTake(threadKey: string, ttlMs: number): Promise<{ token: string; item?: string; leftover?: true; read?: PrefetchedStep } | undefined>;
  /**
   * The item to handle: the thread's in-flight item if it has one (left by a holder that stopped,
   * or taken before a reply was lost), else the next queued item, moved in flight. It stays in
   * flight until `finishWork`, so a process that dies while handling it leaves it for the next
   * holder. Throws `FencedError`.
   */
  takeWork(fence: Fence): Promise<string | undefined>;
  /**
   * Finishes `finished` (the in-flight item) and, in the same step, takes the next item or, when
   * the queue is empty, releases the lock: the next item, or undefined once released. Safe to send
   * again after a lost reply (items are unique: `encodeWorkItem`). Throws `FencedError`.
   * `closing`: the item's last thread save, written first under the same fence in the same round
   * trip (fenced: neither is written). `attempt` names the closing save (`NamedWrite`), for at
   * least `lockTtlMs`: a finish whose save ran before resolves undefined once another process
   * holds the thread (nothing more for this holder). `handBack` (`HandBack`): releases the lock
   * without taking the next item, and resolves undefined.
   */
  finishWork(fence: Fence, finished: string, lockTtlMs: number, closing?: ClosingSave, options?: NamedWrite & HandBack): Promise<string | undefined>;
  /** The item in flight for a thread, if any, without taking the lock: what a stopped holder left (inspection). */
  takeLeftover(threadKey: string): Promise<string | undefined>;
  /**
   * Threads with queued or in-flight work, oldest first: where a dead process may have left work.
   * `before` (epoch ms): only those whose work was last queued at or before it, i.e. work that has
   * waited at least that long (the recovery sweep's grace; a hand-off is taken well within it).
   */
  busyThreads(options: { limit: number; before?: number }): Promise<string[]>;
  /**
   * What the recovery sweep may take: `busyThreads` whose work was last queued at or before `before`
   * and whose lock nobody holds, oldest first, read in one step. A thread a live holder is draining
   * (a long turn keeps its old place in the index) is passed over rather than answered, so any
   * number of them never hides a newer thread whose hand-off was lost. A store may look at a bounded
   * number of index entries per read (Redis: `STALLED_THREADS_SCANNED` per shard).
   */
  stalledThreads(options: { limit: number; before: number }): Promise<string[]>;
  /**
   * Renews (or takes back, if it lapsed and nobody took it) the lock while `fence` is `current`.
   * `taken` or `missing` (see `FenceState`): nothing is written; a missing token is not issued again,
   * so every write under it stays refused and the thread is free for the next message to take.
   */
  extendLock(fence: Fence, ttlMs: number): Promise<FenceState>;
  /** Whether `fence` is still the thread's newest token, telling a token another holder replaced from one Redis lost. */
  fenceState(fence: Fence): Promise<FenceState>;
  /**
   * Releases the lock only when the queue is empty, atomically, so work enqueued while the holder
   * was finishing is never stranded. `more`: keep draining. `released`: done. `fenced`: a newer
   * holder owns the thread. `handBack` (`HandBack`): released even with work left (never `more`).
   */
  releaseLockIfIdle(fence: Fence, lockTtlMs: number, options?: HandBack): Promise<'more' | 'released' | 'fenced'>;
}

/**
 * Everything the bot keeps. Redis and memory implement it with the same semantics; every method
 * that changes shared state is atomic so any bot process can call it concurrently.
 */
export interface StateStore extends DeliveryStore, StepStore, GrantStore, ThreadStore, WorkQueueStore, TakeBackStore, CardRefreshStore {
  readonly kind: 'redis' | 'memory';
  /**
   * Throws when the backing store cannot be reached, or answers but takes no writes (a Redis replica; a full one,
   * or one short of replicas: `WritesRefusedError`). Redis: concurrent calls share one probe, and a success
   * answers the calls of the next second, until a store call fails (`shared-health-probe.ts`).
   */
  ping(): Promise<void>;
  /**
   * How this store's server could lose writes the bot relies on, as read from it (Redis's `INFO`; read
   * again once the last read is a minute old, so a failover or a replica that left shows): logged at
   * start-up and named in `/healthz`. None for memory, whose own start-up warning says it all.
   * Rejects when the server cannot be reached (the next call asks again).
   */
  risks(): Promise<readonly StoreRisk[]>;
  close(): Promise<void>;
}

/** A setting of the store's server that can lose what the bot wrote: `code` names it (a log event), `message` says what follows and what to set. */
export interface StoreRisk {
  code: string;
  message: string;
}
