import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { isFencedError } from '../store/fenced-error.js';
import type { ClosingSave, Fence, PrefetchedStep, StateStore, WorkClaim } from '../store/state-store.js';
import { createLease, type Lease } from './lease.js';
import type { LoadGate } from './load-gate.js';
import { isStateLostError } from './state-lost-error.js';
import { createHold, LockLostError } from './thread-lock-hold.js';
import { decodeWorkItem, encodeWorkItem, type WorkItem } from './work-item.js';

/** What a handled item leaves for the queue's finish of it. */
export interface ItemEnd {
  /** The item's last thread save, written with the finish in the same round trip. */
  closing?: ClosingSave;
  /**
   * Run when the closing save is known never to be written because another process holds the
   * thread (the finish refused as fenced, or the lease lost before it): takes back an effect that
   * save was to record, e.g. the messages of an answer posted but not yet recorded as shown, which
   * the thread's new holder shows again from the save before.
   */
  takeBack?: () => Promise<void>;
}

export interface ThreadWorkerOptions {
  store: StateStore;
  /**
   * Handles one item while this process holds the thread; every effect goes through `lease`. What
   * it returns is for the item's finish (see `ItemEnd`). `prefetched`: what the pick-up read for
   * the item (a resume's step and thread), read after the lock was taken.
   */
  handle: (item: WorkItem, lease: Lease, prefetched?: PrefetchedStep) => Promise<ItemEnd | undefined | void>;
  logger: Logger;
  /** The lock outlives a crashed holder by at most this long; a live holder renews it. */
  lockTtlMs?: number;
  /**
   * Admits items while this process has room (a cap, and an event loop that keeps up). A burst
   * then waits (each thread's lock renewed) instead of piling turn work onto a loop that is behind.
   */
  gate?: LoadGate;
  /**
   * For a process that only receives: `submit` queues the item and offers the thread to the
   * workers (`work-puller.ts`) instead of draining it here, so this event loop only acks Slack.
   */
  handOff?: boolean;
}

export interface ThreadWorker {
  /**
   * Queues work for a thread. The caller that gets the thread's lock drains the queue, one item at
   * a time; everyone else returns at once. The promise settles when this caller's drain is done.
   * `recovered`: work the recovery sweep found (a decided step nobody resumed), drained under a
   * `recovered` lease as `startPickUp`'s; a live holder that has the thread drains it as its own.
   * `fromRequest`: the item of a Slack request this process acked (a message, a click), which its
   * stop waits for: run even once stopping if its enqueue takes the lock with this very item (see
   * `stopTaking`). Left out for work nobody asked this process for (a scheduled turn, a recovery).
   */
  submit(threadKey: string, item: WorkItem, options?: { recovered?: boolean; fromRequest?: boolean }): Promise<void>;
  /** Drains a thread whose lock is free but which still has work, e.g. left by a process that died. */
  pickUp(threadKey: string): Promise<boolean>;
  /**
   * `pickUp`, answered once the lock is taken (true: the drain runs on, `idle` waits for it) or
   * refused (false), not once the drain ends: the recovery sweep takes threads one at a time this
   * way, each counted by the gate before it looks at `room` again. Its items run under a
   * `recovered` lease (`Lease.recovered`).
   */
  startPickUp(threadKey: string): Promise<boolean>;
  /**
   * How many more threads this process has room to start now (its gate's `room`). The recovery
   * sweep takes no more than this, so a full worker leaves waiting work in Redis for one with room.
   */
  room(): number;
  /**
   * How work queued inside another atomic write (`StepStore.commitStepAndQueue`) reaches a drain:
   * `drain` takes a free lock there (then `drainClaimed` runs it), `hand-off` offers the thread to
   * the workers, as `submit` does for this process.
   */
  readonly queueing: { mode: 'drain' | 'hand-off'; lockTtlMs: number };
  /**
   * Counts a claim such a write took for this process from the moment it is taken, not only once
   * `drainClaimed` runs it: a click draws its card first (a rate-limited update waits out its
   * Retry-After), and a stop that closed the store meanwhile would leave the lock held, the resume
   * neither run nor handed back. Returns the claim to give `drainClaimed`, which ends the count.
   */
  claimTaken(threadKey: string, claim: TakenClaim): TakenClaim;
  /** Drains a thread whose lock such a write took for this process (its first item in flight). */
  drainClaimed(threadKey: string, claim: TakenClaim): Promise<void>;
  /**
   * Resolves when every drain started by this process has finished, every `submit` has had its
   * item queued, every pick-up its lock answered and every `claimTaken` claim been drained
   * (graceful shutdown, tests): the store must not close under any of them. Once stopping, a claim
   * not yet given to `drainClaimed` is handed back at once instead (its item not started): the stop
   * waits for it no longer (its request outlasted the stop's wait), and the lock is this process's to release.
   * So is one taken while such an idle already waits (a request answered later still): it is never counted.
   */
  idle(): Promise<void>;
}

/** The worker as the process that made it holds it: what its users get, and the stop only the process sends. */
export interface OwnedThreadWorker extends ThreadWorker {
  /**
   * For a process told to stop: from now on a drain takes no further item from its thread's queue.
   * It ends the item it has in hand (the running turn, or the one its own claim came with when it
   * is the very item of a request this process acked before it stopped listening, which its stop
   * waits for), then hands the thread back (`HandBack`): the lock released at once, what is queued
   * left there and offered to the other processes, so a live replica runs it in full rather than
   * this process start a turn that its stop would cut. Any other item not started yet is handed
   * back too, left in flight: a later one taken before the stop (still waiting for room, or taken by
   * a finish whose reply came after), and a first one that is not the very item this process's own
   * request queued (`submit`'s `fromRequest`, `TakenClaim.request`): a pick-up's (`pickUp`,
   * `startPickUp`: work another process left), a scheduled turn's, a recovered resume's, an
   * expiry's, or the thread's older work an acked request's enqueue took first (a left-over item,
   * one another replica queued).
   */
  stopTaking(): void;
}

/**
 * A thread's lock as taken: its token, the first item (and what was read for it) if taken with it,
 * and when it was asked for and for whose request (see `TakenClaim`).
 */
type Claim = { token: string; item?: string; leftover?: true; read?: PrefetchedStep; askedAt: number; recovered?: boolean; request?: string };

/**
 * A claim and when it was asked for: `askedAt` is `Date.now()` just before the request that took the
 * lock was sent. The lock is this process's until `askedAt` + the TTL at most, however long the
 * process took (or stalled) before it got to run the claim. `request`: the encoded item that a Slack
 * request this process acked queued with the write that took the lock (a completing click's
 * resume). A stopping process runs the claim's item only if it is that very one: the write takes
 * the thread's oldest work first (an item left in flight, else the queue's head), which may be
 * another replica's; work nobody asked this process for carries none.
 */
export type TakenClaim = WorkClaim & { askedAt: number; request?: string };

const DEFAULT_LOCK_TTL_MS = 30_000;
/** Tests and tools that build a worker without a gate: no limit. */
const UNGATED: LoadGate = { acquire: async () => () => {}, whenRoom: async () => {}, active: () => 0, waiting: () => 0, room: () => Number.POSITIVE_INFINITY };

export function createThreadWorker({
  store,
  handle,
  logger,
  lockTtlMs = DEFAULT_LOCK_TTL_MS,
  gate = UNGATED,
  handOff = false,
}: ThreadWorkerOptions): OwnedThreadWorker {
  const running = new Set<Promise<void>>();
  // Claims a store write took for this process (`claimTaken`), until their drain begins: `drained` once it has.
  const claimed = new Map<TakenClaim, ClaimEntry>();
  let stopping = false;
  // Set once a stopping `idle` has begun: from then on a claim is handed back as soon as it is taken,
  // never counted, since nothing would end that count should its listener not drain it (a form's late ack throwing).
  let handingBack = false;
  // Aborted by `stopTaking`: a drain's later item waiting for room gives up its place and is handed back.
  const stop = new AbortController();

  async function drain(threadKey: string, claim: Claim): Promise<void> {
    const { token, item: first, askedAt } = claim;
    let prefetched = claim.read;
    const fence: Fence = { threadKey, token };
    // Called only once both exist: a renewal that finds the token gone tells the lease.
    const hold = createHold({ store, fence, lockTtlMs, askedAt, onMissing: () => lease.markMissing() });
    const lease = createLease({
      store,
      fence,
      heldUntil: hold.heldUntil,
      // For an operator to alert on: whatever else ran on this Redis lost its state too.
      onStateLost: () => logger.error({ event: 'redis-state-lost', threadKey }, "Redis lost this thread's state (its fencing token is gone: restarted or failed over without its data?); the turn cannot be saved"),
      // Taken by the recovery sweep, or taken with an item a lapsed holder left unfinished: that
      // holder's effects after its last write (a card it never drew) are this drain's to show,
      // whichever message, click or sweep took the lock.
      ...(claim.recovered || claim.leftover ? { recovered: true } : {}),
    });
    // Finishing an item and releasing the lock set the lock's expiry themselves (or delete the
    // lock). A renewal sent while one is on its way could land after the release and lock the
    // thread again for a whole TTL with nobody draining it, so the heartbeat sits those out.
    let settling = 0;
    const settlingQueue = async <T>(operation: () => Promise<T>): Promise<T> => {
      settling += 1;
      try {
        return await operation();
      } finally {
        settling -= 1;
      }
    };
    // Renew at a third of the TTL so one slow Redis reply cannot let the lock lapse mid-turn.
    const heartbeat = setInterval(() => {
      if (settling > 0) return;
      hold.renew().then(
        (held) => {
          // Gone rather than taken: the lease was told (`onMissing`), and a running tool is left to finish.
          if (held !== 'taken') return;
          lease.markLost();
          logger.warn({ event: 'thread-lock-lost', threadKey }, 'another process took this thread over; stopping without further effects');
        },
        (error: unknown) => logger.warn({ event: 'thread-lock-renew-failed', threadKey, err: error }, 'could not renew thread lock'),
      );
    }, Math.max(10, Math.floor(lockTtlMs / 3)));
    const whileHeld = <T>(operation: () => Promise<T>, retry?: () => Promise<T>) =>
      hold.whileHeld(operation, {
        retry: retry ?? operation,
        onFailure: (error) => logger.warn({ event: 'thread-queue-unreachable', threadKey, err: error }, 'could not update the thread queue; trying again while the lock is held'),
      });
    // Hands the thread back with the item in hand left in flight, not started (a later holder runs it
    // first, as a leftover), and what is queued left and offered to the other processes.
    const handBack = async () => {
      const released = await settlingQueue(() => whileHeld(() => store.releaseLockIfIdle(fence, lockTtlMs, { handBack: true })));
      if (released === 'fenced') throw new LockLostError(`lost the lock on ${threadKey}`);
    };
    // The drain's first item runs even once the process is stopping only if it is the very item of
    // a request this process acked before it stopped listening (which the stop waits for). Any other
    // (work another process left or queued, a scheduled turn, a recovery) and any later one were
    // never this process's to answer: they start only if the stop has not come by the time they have room.
    let mayHandBack = claim.request === undefined || claim.item !== claim.request;
    try {
      // An item a dead holder was handling comes first (takeWork returns it): it was taken but never finished.
      // An enqueue that took the lock took its first item too.
      let encoded: string | undefined = first ?? (await whileHeld(() => store.takeWork(fence)));
      for (;;) {
        if (lease.lost()) throw new LockLostError(`lost the lock on ${threadKey}`);
        if (encoded === undefined) {
          // Told to stop, work queued meanwhile is left (and offered) to another process.
          const released = await settlingQueue(() => whileHeld(() => store.releaseLockIfIdle(fence, lockTtlMs, { handBack: stopping })));
          if (released === 'released') return;
          if (released === 'fenced') throw new LockLostError(`lost the lock on ${threadKey}`);
          encoded = await whileHeld(() => store.takeWork(fence));
          continue;
        }
        const item = decodeWorkItem(encoded);
        let end: ItemEnd | undefined;
        if (!item) logger.warn({ event: 'work-item-invalid', threadKey }, 'dropped an unreadable work item');
        else {
          // A later item taken before the stop (by a finish whose reply was on its way, or waiting
          // here for room on a full process) has not started: the stop gives up its place.
          const release = mayHandBack ? await gate.acquire(stop.signal).catch(() => undefined) : await gate.acquire();
          if (release === undefined || (mayHandBack && stopping)) {
            release?.();
            await handBack();
            return;
          }
          try {
            // Read with the lock for the first item only; later items read for themselves.
            const read = prefetched;
            prefetched = undefined;
            end = (await handle(item, lease, read)) ?? undefined;
          } catch (error) {
            if (isFencedError(error) || isStateLostError(error)) throw new LockLostError(`lost the lock on ${threadKey}`);
            logger.error({ event: 'work-item-failed', threadKey, kind: item.kind, err: error }, 'work item failed');
          } finally {
            release();
          }
        }
        mayHandBack = true;
        // Only for another holder, who shows the item's effect again from the save before: when
        // Redis lost the thread's state nobody will, so what was shown stays.
        const takeBack = async () => {
          if (lease.stateLost()) return;
          await end?.takeBack?.().catch((error: unknown) => logger.warn({ event: 'take-back-failed', threadKey, err: error }, 'could not take back what the unfinished item did'));
        };
        // State lost: the finish would be refused (the token is gone), and the queue is gone with it.
        if (lease.lost() || lease.stateLost()) {
          await takeBack();
          throw new LockLostError(`lost the lock on ${threadKey}`);
        }
        const finished = encoded;
        // A closing save with something to take back is named, the same name for every try: a try
        // that landed with its reply lost (sent again by the client on its new connection, or tried
        // again here) is answered as written even once another process took the thread, so a
        // refusal as fenced means it was never written, and only then is the effect taken back.
        const named = end?.takeBack ? { attempt: randomUUID() } : undefined;
        // Read at each try: one sent after the stop began hands the thread back instead of taking
        // the next item (and hands back one a try whose reply was lost took).
        const finish = () => store.finishWork(fence, finished, lockTtlMs, end?.closing, { ...named, handBack: stopping });
        try {
          // One step: finish this item and take the next, or release the lock when there is none.
          encoded = await settlingQueue(() => whileHeld(finish));
        } catch (error) {
          if (isFencedError(error)) {
            await lease.settleRefusal();
            await takeBack();
          }
          throw error;
        }
        if (encoded === undefined) return;
      }
    } catch (error) {
      if (!(error instanceof LockLostError) && !isFencedError(error)) throw error;
      // Redis lost the thread (logged as `redis-state-lost` when found): there is nothing left to drain.
      if (lease.stateLost()) logger.warn({ event: 'thread-state-lost', threadKey }, 'stopped draining a thread whose state Redis lost');
      // Another process owns the thread now; what is left is theirs.
      else logger.warn({ event: 'thread-fenced', threadKey }, 'another process holds this thread now; stopped draining without further effects');
    } finally {
      clearInterval(heartbeat);
    }
  }

  async function run(threadKey: string, claim: Claim): Promise<void> {
    // A drain that fails (the store stayed away until the lock would lapse) leaves its items queued;
    // the lock expires and the next message, click or recovery sweep on the thread drains them.
    const drained = drain(threadKey, claim).catch((error: unknown) => {
      logger.error({ event: 'thread-drain-failed', threadKey, err: error }, 'stopped draining thread queue');
    });
    running.add(drained);
    try {
      await drained;
    } finally {
      running.delete(drained);
    }
  }

  /** Drained as a claim of no request: handed back, its item left in flight and the thread offered; its count ended. */
  function handBackClaim(claim: TakenClaim, entry: ClaimEntry): void {
    const { request: _unwaited, ...unasked } = claim;
    entry.drained = run(entry.threadKey, unasked);
    entry.counted();
  }

  /** `promise`, counted by `idle` until it settles (its outcome is still the caller's). */
  function track<T>(promise: Promise<T>): Promise<T> {
    const settled = promise.then(
      () => {},
      () => {},
    );
    running.add(settled);
    void settled.then(() => running.delete(settled));
    return promise;
  }

  /** A pick-up's lock, for no request of this process's: its drain hands the thread back, its item not started, if the stop came meanwhile. */
  async function take(threadKey: string): Promise<Claim | undefined> {
    const askedAt = Date.now();
    const claim = await store.lockAndTake(threadKey, lockTtlMs);
    return claim === undefined ? undefined : { ...claim, askedAt };
  }

  return {
    // Both counted by `idle` from the start, not only once the lock is taken: the puller does not
    // await its pick-up, and a stop that closed the store under its lock take would leave the
    // thread locked, its work unseen, until the lock lapsed.
    pickUp(threadKey) {
      return track(
        (async () => {
          const claim = await take(threadKey);
          if (claim === undefined) return false;
          await run(threadKey, claim);
          return true;
        })(),
      );
    },
    startPickUp(threadKey) {
      return track(
        (async () => {
          const claim = await take(threadKey);
          if (claim === undefined) return false;
          // The item taken with the lock asks the gate before this returns, so `room` already counts it.
          void run(threadKey, { ...claim, recovered: true });
          return true;
        })(),
      );
    },
    room: () => gate.room(),
    submit(threadKey, item, { recovered = false, fromRequest = false } = {}) {
      // Counted by `idle` from the start, not only once its drain runs: a caller that does not await
      // it (a scheduled turn, a recovered resume) would otherwise see the store closed under its enqueue.
      return track(
        (async () => {
          const encoded = encodeWorkItem(item);
          if (handOff) return store.handOffWork(threadKey, encoded);
          const askedAt = Date.now();
          const claim = await store.enqueueWork(threadKey, encoded, lockTtlMs);
          if (claim === undefined) return;
          await run(threadKey, { ...claim, askedAt, ...(recovered ? { recovered } : {}), ...(fromRequest ? { request: encoded } : {}) });
        })(),
      );
    },
    queueing: { mode: handOff ? 'hand-off' : 'drain', lockTtlMs },
    claimTaken(threadKey, claim) {
      const held = { ...claim };
      if (handingBack) {
        const entry: ClaimEntry = { threadKey, counted: () => {} };
        claimed.set(held, entry);
        handBackClaim(held, entry);
        return held;
      }
      let counted = () => {};
      track(
        new Promise<void>((resolve) => {
          counted = resolve;
        }),
      );
      claimed.set(held, { threadKey, counted });
      return held;
    },
    drainClaimed(threadKey, claim) {
      const entry = claimed.get(claim);
      if (entry === undefined) return run(threadKey, claim);
      claimed.delete(claim);
      // Handed back by a stop that waited no longer: the thread is another process's now.
      if (entry.drained) return entry.drained;
      // `run` counts the drain at once, before the claim stops being counted.
      const drained = run(threadKey, claim);
      entry.counted();
      return drained;
    },
    stopTaking() {
      stopping = true;
      stop.abort();
    },
    async idle() {
      if (stopping) handingBack = true;
      for (;;) {
        // Every claim still waiting for its drain, whenever seen: the stop never waits on one that may never drain.
        if (handingBack) for (const [claim, entry] of claimed) if (!entry.drained) handBackClaim(claim, entry);
        if (running.size === 0) return;
        await Promise.allSettled([...running]);
      }
    },
  };
}

/** A `claimTaken` claim until `drainClaimed`: `counted` ends its count for `idle`, `drained` once its drain has begun. */
interface ClaimEntry {
  threadKey: string;
  drained?: Promise<void>;
  counted: () => void;
}
