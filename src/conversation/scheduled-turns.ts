import { Cron } from 'croner';
import type { Logger } from 'pino';
import type { ScheduleConfig } from '../config/schedule-config-schema.js';
import type { DeliveryStore, ThreadStore } from '../store/state-store.js';
import { newThreadState, threadKeyOf } from '../store/thread-state.js';
import { scheduleActor } from './schedule-actor.js';
import { shortError } from './short-error.js';
import type { ThreadMessenger } from './thread-messenger.js';
import type { ThreadWorker } from './thread-worker.js';
import type { MessageWorkItem } from './work-item.js';

/** Timers for the scheduler; tests pass one they advance by hand, so no test waits for real minutes. */
export interface ScheduleClock {
  now(): number;
  /** Calls `callback` after about `delayMs`; a test clock may await what the callback returns. */
  setTimer(callback: () => Promise<void>, delayMs: number): { cancel(): void };
}

export const realScheduleClock: ScheduleClock = {
  now: Date.now,
  setTimer(callback, delayMs) {
    const timer = setTimeout(() => void callback(), delayMs);
    // A pending firing must not keep a stopping process alive.
    timer.unref();
    return { cancel: () => clearTimeout(timer) };
  },
};

/** Where a firing's top-level message goes: the Slack side implements it (`slack/channel-poster.ts`). */
export interface ChannelPoster {
  /** Posts a message the bot wrote at the top of `channel`; resolves with its ts (the new thread). */
  postChannelMessage(options: { channel: string; text: string }): Promise<string>;
}

export interface ScheduledTurns {
  start(): void;
  /** Cancels the timers and waits for firings under way (their turns are the worker's). */
  stop(): Promise<void>;
}

function notQueuedText(error: unknown): string {
  return `:warning: I could not queue this scheduled turn (${shortError(error)}). The schedule runs again at its next time.`;
}

/** Node's timers hold at most about 24.8 days; a later firing is waited for in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/**
 * How long a firing's claim is kept: far longer than any replica's clock or timer can be late, so
 * a firing is never run twice, and short enough that claims do not pile up in Redis.
 */
const CLAIM_TTL_MS = 48 * 60 * 60 * 1000;

/**
 * Runs the config's `schedules:` in this process: at each firing, the one process that claims it
 * (schedule name plus scheduled minute, `claimOnce` in the store) posts "Scheduled: <name>" in the
 * channel and queues the prompt as a message in that new thread, from `schedule:<name>`. Every
 * process that runs turns runs the timers; the claim makes each firing one turn across replicas.
 * Crons without a `timezone` are read in UTC, never the host's zone: replicas on hosts set to
 * different zones must name the same minute for a firing, or each would claim its own.
 *
 * Firings missed while no process was up are not replayed: on start the next firing is the next
 * one from now. A heartbeat prompt answered hours late is stale, and an outage should not end in
 * a burst of catch-up turns. A timer that wakes late (a stalled loop) still runs the firing it was
 * set for, once, then continues from the present.
 */
export function createScheduledTurns(options: {
  schedules: readonly ScheduleConfig[];
  store: DeliveryStore & Pick<ThreadStore, 'createThreadIfAbsent'>;
  poster: ChannelPoster;
  /** Tells a firing's thread that its turn could not be queued, so the post is not left unexplained. */
  notices: Pick<ThreadMessenger, 'postNotice'>;
  /** How long a thread is followed after its last message (the history TTL), as for a mention. */
  followTtlMs: number;
  worker: Pick<ThreadWorker, 'submit'>;
  /** The workspace the bot token belongs to (cached `auth.test`): threads are keyed and clicks checked by it. */
  teamId: () => Promise<string>;
  clock?: ScheduleClock;
  logger: Logger;
}): ScheduledTurns {
  const { store, poster, notices, worker, logger, followTtlMs } = options;
  const clock = options.clock ?? realScheduleClock;
  const timers = new Map<string, { cancel(): void }>();
  const firing = new Set<Promise<void>>();
  let running = false;

  function armNext(schedule: ScheduleConfig, cron: Cron, after: number): void {
    const next = cron.nextRun(new Date(after));
    if (!next) return;
    armAt(schedule, cron, next.getTime());
  }

  function armAt(schedule: ScheduleConfig, cron: Cron, at: number): void {
    const delay = Math.min(Math.max(0, at - clock.now()), MAX_TIMER_MS);
    timers.set(
      schedule.name,
      clock.setTimer(async () => {
        if (!running) return;
        if (clock.now() < at) return armAt(schedule, cron, at);
        armNext(schedule, cron, Math.max(clock.now(), at));
        const run = fire(schedule, at);
        firing.add(run);
        await run.finally(() => firing.delete(run));
      }, delay),
    );
  }

  async function fire(schedule: ScheduleConfig, at: number): Promise<void> {
    const minute = new Date(at).toISOString().slice(0, 16);
    const where = { event: 'schedule-fired', schedule: schedule.name, at: minute };
    try {
      if (!(await store.claimOnce([`schedule:${schedule.name}:${minute}`], CLAIM_TTL_MS))) return;
      const teamId = await options.teamId();
      const threadTs = await poster.postChannelMessage({ channel: schedule.channel, text: `:alarm_clock: Scheduled: *${schedule.name}*` });
      logger.info({ ...where, channel: schedule.channel, threadTs }, 'running a scheduled turn');
      const item: MessageWorkItem = {
        kind: 'message',
        userId: scheduleActor(schedule.name),
        text: schedule.prompt,
        ts: threadTs,
        teamId,
        channel: schedule.channel,
        threadTs,
        readEarlierMessages: false,
      };
      await queueTurn(item, where);
    } catch (error) {
      // Claimed but not started (Slack or Redis failed): this firing is lost, the next one comes as planned.
      logger.error({ ...where, err: error }, 'could not start a scheduled turn');
    }
  }

  /**
   * Follows the new thread before queuing its turn, as a mention does, so a reply sent before the
   * turn starts is queued for it rather than dropped as chatter in an unknown thread. A turn that
   * could not be queued is said in the thread: its post alone would promise a turn that never comes.
   */
  async function queueTurn(item: MessageWorkItem, where: Record<string, string>): Promise<void> {
    const notQueued = async (error: unknown) => {
      logger.error({ ...where, err: error }, 'could not queue a scheduled turn');
      await notices
        .postNotice({ channel: item.channel, threadTs: item.threadTs, text: notQueuedText(error) })
        .catch((noticeError: unknown) => logger.warn({ ...where, err: noticeError }, 'could not say in the thread that its scheduled turn was not queued'));
    };
    try {
      await store.createThreadIfAbsent(newThreadState(item, Date.now()), followTtlMs);
    } catch (error) {
      return notQueued(error);
    }
    // Not awaited: the turn may wait minutes for the thread; the worker owns it from here. The
    // submit fails only when the item could not be queued (a failed turn is the worker's to tell).
    void worker.submit(threadKeyOf(item), item).catch(notQueued);
  }

  return {
    start() {
      if (running) return;
      running = true;
      for (const schedule of options.schedules) {
        const cron = new Cron(schedule.cron, { paused: true, timezone: schedule.timezone ?? 'UTC' });
        armNext(schedule, cron, clock.now());
      }
      if (options.schedules.length > 0) logger.info({ event: 'schedules-started', schedules: options.schedules.map((schedule) => schedule.name) }, 'running schedules');
    },
    async stop() {
      running = false;
      for (const timer of timers.values()) timer.cancel();
      timers.clear();
      await Promise.allSettled([...firing]);
    },
  };
}
