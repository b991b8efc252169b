/**
 * The schedule of work a process keeps in the store when Slack refuses it (a take-back, a card's
 * redraw): the process that failed tries a few times itself, then any process's sweep, with pauses
 * that double, until it gives up and tells the operator. Shared so both kinds back off alike.
 */
export const KEPT_RETRIES = {
  /** The pauses before the tries the failing process makes after the first (longer for a rate limit's retry-after). */
  ownPausesMs: [1_000, 2_000, 4_000],
  /** No try starts in the failing process later than this after the failure; one that would is left to the sweep. */
  ownLastTryMs: 10_000,
  /**
   * Kept work is the sweep's from this long after the failure: the process's own tries are usually over by then;
   * one waiting out a long Retry-After (`createPerCallRateLimits`) may not be, and the sweep then repeats a redraw
   * or a delete, which is harmless (a re-post is settled by `replaceStepCard`).
   */
  ownTriesMs: 15_000,
  /** The sweep's pause after a failed try: as long as the work has been failing (each wait doubles), within these. */
  sweepPauseMinMs: 5_000,
  sweepPauseMaxMs: 15 * 60 * 1000,
  /** After this, the work is left undone and the operator told. */
  giveUpAfterMs: 24 * 60 * 60 * 1000,
  /** Kept work tried per sweep, so one sweep stays short while Slack fails. */
  batch: 20,
} as const satisfies KeptRetrySchedule;

/** The schedule's shape: `KEPT_RETRIES` in production; tests give shorter pauses (`CreateBotOptions.keptRetries`). */
export interface KeptRetrySchedule {
  readonly ownPausesMs: readonly number[];
  readonly ownLastTryMs: number;
  readonly ownTriesMs: number;
  readonly sweepPauseMinMs: number;
  readonly sweepPauseMaxMs: number;
  readonly giveUpAfterMs: number;
  readonly batch: number;
}

export type KeptTry<OUTCOME extends string> = { done: true; outcome: OUTCOME } | { done: false; retryAfterMs?: number };

/**
 * The failing process's own tries (`KEPT_RETRIES.ownPausesMs`), from `since`, the first failure:
 * `tryOnce` tries what is still to do, until it is all done (true) or the tries are over (false:
 * the sweep, or nobody if it could not be kept, has the rest). `retryAfterMs`: how long Slack asked
 * to wait before the next try (the first failure's, then each try's).
 */
export async function runOwnTries({
  since,
  retryAfterMs: firstRetryAfterMs,
  tryOnce,
  now,
  pause,
  schedule,
}: {
  since: number;
  retryAfterMs: number | undefined;
  tryOnce: () => Promise<{ done: true } | { done: false; retryAfterMs?: number | undefined }>;
  now: () => number;
  pause: (ms: number) => Promise<void>;
  /** `KEPT_RETRIES` in production; the callers' own (tests give shorter pauses). */
  schedule: KeptRetrySchedule;
}): Promise<boolean> {
  let retryAfterMs = firstRetryAfterMs ?? 0;
  for (const pauseMs of schedule.ownPausesMs) {
    const wait = Math.max(pauseMs, retryAfterMs);
    // Slack asked for longer than these tries last: the sweep tries then.
    if (now() + wait > since + schedule.ownLastTryMs) break;
    await pause(wait);
    const tried = await tryOnce();
    if (tried.done) return true;
    retryAfterMs = tried.retryAfterMs ?? 0;
  }
  return false;
}

/**
 * How long a process offers kept work the store could not take (`keepUntilStoreAnswers`) before it
 * tells the operator, in own tries' spans (`ownTriesMs`: 5 min by default, when a Sentinel failover's
 * 30 s detection and a quick restart are over), and its longest pause after that, in the same spans.
 */
export const OUTAGE_KEEP = { ownTriesTimes: 20, laterPauseOwnTries: 4 } as const;

/**
 * Offers work the store could not keep (`keep`, which throws while the store is unreachable) again
 * and again, until it takes it (true) or the schedule's `giveUpAfterMs` has passed since `since`
 * (false): a primary's restart with a big AOF or a network partition can outlast the failing
 * process's own tries, and work never kept is nobody's once they are over. Pauses start at the own
 * tries' first and double up to the sweep's shortest; past `OUTAGE_KEEP.ownTriesTimes` own tries'
 * spans `stillDown` is called once and pauses grow up to `OUTAGE_KEEP.laterPauseOwnTries` spans.
 * `pause` (a test's clock) defaults to an unref'd timer, so the offers do not hold a stopping process
 * open: one that stops drops the work. It also ends once its pauses add up to `giveUpAfterMs`, so a
 * pause that does not move `now` (a test's) cannot spin.
 */
export async function keepUntilStoreAnswers({
  since,
  keep,
  stillDown,
  now,
  pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref()),
  schedule,
}: {
  since: number;
  keep: () => Promise<unknown>;
  stillDown: (failingMs: number) => void;
  now: () => number;
  pause?: ((ms: number) => Promise<void>) | undefined;
  /** `KEPT_RETRIES` in production; the callers' own (tests give shorter pauses). */
  schedule: KeptRetrySchedule;
}): Promise<boolean> {
  const longAfter = since + schedule.ownTriesMs * OUTAGE_KEEP.ownTriesTimes;
  const until = since + schedule.giveUpAfterMs;
  let toldLong = false;
  let waited = 0;
  for (let pauseMs = schedule.ownPausesMs[0] ?? schedule.sweepPauseMinMs; now() < until && waited < schedule.giveUpAfterMs; ) {
    await pause(pauseMs);
    waited += pauseMs;
    const kept = await keep().then(
      () => true,
      () => false,
    );
    if (kept) return true;
    const long = now() >= longAfter;
    if (long && !toldLong) {
      toldLong = true;
      stillDown(now() - since);
    }
    pauseMs = Math.min(pauseMs * 2, long ? schedule.ownTriesMs * OUTAGE_KEEP.laterPauseOwnTries : schedule.sweepPauseMinMs);
  }
  return false;
}

/**
 * One sweep's pass over the kept work that is due. Each is claimed for its pause first (`claim`:
 * moved to `until` only while still due by `now`, so false when another process's sweep claimed
 * it, whatever pause it chose, or it was completed and forgotten meanwhile, so a failure here does
 * not keep it again); done or failing for too long, it is forgotten, and reported by whoever forgot
 * it. `postpone` moves it later still for a try that asked for longer (a Retry-After).
 */
export async function retryDueKept<WORK extends { since: number }, OUTCOME extends string>({
  due,
  claim,
  postpone,
  forget,
  tryAgain,
  reportEnd,
  now,
  stopping,
  schedule,
}: {
  due: (options: { now: number; limit: number }) => Promise<readonly WORK[]>;
  claim: (work: WORK, options: { now: number; until: number }) => Promise<boolean>;
  postpone: (work: WORK, until: number) => Promise<boolean>;
  forget: (work: WORK) => Promise<boolean>;
  tryAgain: (work: WORK) => Promise<KeptTry<OUTCOME>>;
  reportEnd: (work: WORK, outcome: OUTCOME | 'given-up') => void;
  now: () => number;
  stopping?: AbortSignal | undefined;
  /** `KEPT_RETRIES` in production; the callers' own (tests give shorter pauses). */
  schedule: KeptRetrySchedule;
}): Promise<void> {
  for (const work of await due({ now: now(), limit: schedule.batch })) {
    if (stopping?.aborted) return;
    const at = now();
    const failingMs = at - work.since;
    const pauseMs = Math.min(Math.max(failingMs, schedule.sweepPauseMinMs), schedule.sweepPauseMaxMs);
    if (!(await claim(work, { now: at, until: at + pauseMs }))) continue;
    const tried = await tryAgain(work);
    if (tried.done || failingMs >= schedule.giveUpAfterMs) {
      if (await forget(work)) reportEnd(work, tried.done ? tried.outcome : 'given-up');
      continue;
    }
    if ((tried.retryAfterMs ?? 0) > pauseMs) await postpone(work, now() + (tried.retryAfterMs ?? 0));
  }
}
