import type { App } from '@slack/bolt';
import type { Bot } from '../../src/create-bot.js';
import type { StateStore } from '../../src/store/state-store.js';

/**
 * Slack requests an App is still handling. Both receivers (HTTP and Socket Mode) hand every request
 * to `app.processEvent` before acking it, and that promise settles once every listener for the
 * request has returned; so a request is seen from before its ack until its last listener is done.
 */
export interface SlackRequestTracker {
  /** How many requests have reached the app so far. */
  started(): number;
  /** Requests whose listeners are still running. */
  running(): number;
  /**
   * Resolves once at most `stillRunning` requests are being handled (default none); requests
   * arriving meanwhile are waited for too.
   */
  handled(stillRunning?: number): Promise<void>;
}

/** Call before the app starts, so no request goes unseen. */
export function trackSlackRequests(app: App): SlackRequestTracker {
  const running = new Set<Promise<void>>();
  let started = 0;
  const processEvent = app.processEvent.bind(app);
  app.processEvent = (event) => {
    started += 1;
    const handling = processEvent(event);
    const done = handling.then(
      () => {},
      () => {},
    );
    running.add(done);
    void done.then(() => running.delete(done));
    return handling;
  };
  return {
    started: () => started,
    running: () => running.size,
    async handled(stillRunning = 0) {
      while (running.size > stillRunning) await Promise.race([...running]);
    },
  };
}

/**
 * Counts the expiry sweeps a store sees. Each sweep starts by asking for due reminders, and a
 * process runs one sweep at a time, so the second sweep begun after a moment means a whole sweep
 * ran after it.
 */
function trackSweeps(store: StateStore): { whole(): Promise<void> } {
  let begun = 0;
  const waiting = new Set<{ at: number; resolve: () => void }>();
  const dueSteps = store.dueSteps.bind(store);
  store.dueSteps = (options) => {
    if (options.kind === 'reminder') {
      begun += 1;
      for (const waiter of [...waiting]) {
        if (begun < waiter.at) continue;
        waiting.delete(waiter);
        waiter.resolve();
      }
    }
    return dueSteps(options);
  };
  return {
    whole: () => new Promise((resolve) => waiting.add({ at: begun + 2, resolve })),
  };
}

export interface SettleOptions {
  /**
   * Turns the test holds open on purpose (e.g. a model reply it has not released yet). Their drain
   * never goes idle, and the Slack request that started each one stays busy with it (listeners await
   * their drain); so settled then waits only until no more than this many requests are still being
   * handled, and not for drains or queues.
   */
  holding?: number;
  /**
   * First wait for a whole expiry sweep of every bot, begun after this call: what a sweep does
   * (reminders, expiry) is not a Slack request. Only for bots with a short `sweepIntervalMs`.
   */
  sweep?: boolean;
  /**
   * false: wait for the Slack requests only, not for drains and queues; for a test that holds a
   * submit on purpose (a scheduled firing's enqueue), which `worker.idle()` counts from its start.
   */
  drains?: boolean;
  timeoutMs?: number;
}

/** Bots that share one store's keys: a bot and its replicas, or the bot after a restart. */
export interface BotWatch {
  /** Starts watching `bot`; call between `createBot` and `bot.start()`. */
  add(bot: Bot): void;
  /**
   * The barrier for checks that something did not happen: resolves once no watched bot is handling
   * a Slack request, no thread drain is running, and the store has no queued or in-flight work (the
   * busy-threads set is empty). Anything a request, a drain or (with `sweep`) a sweep sets off is
   * done by then, so what has not happened will not; work the bot detaches from all of them (a bare
   * timer, an unawaited promise) is not seen. Throws, saying what is still going on, after `timeoutMs`.
   */
  settled(options?: SettleOptions): Promise<void>;
}

const DEFAULT_SETTLE_TIMEOUT_MS = 10_000;
/** How often the store is asked again while work is queued for another process (or a lock lapses). */
const BUSY_POLL_MS = 20;

export function watchBots(): BotWatch {
  const watched: Array<{ bot: Bot; requests: SlackRequestTracker; sweeps: { whole(): Promise<void> }; stopped: boolean }> = [];
  const live = () => watched.filter((entry) => !entry.stopped);

  return {
    add(bot) {
      const entry = { bot, requests: trackSlackRequests(bot.app), sweeps: trackSweeps(bot.store), stopped: false };
      watched.push(entry);
      // Its store is closed once it stops; a stopped bot has nothing running.
      const stop = bot.stop.bind(bot);
      bot.stop = async () => {
        await stop();
        entry.stopped = true;
      };
    },

    async settled({ holding = 0, sweep = false, drains = true, timeoutMs = DEFAULT_SETTLE_TIMEOUT_MS } = {}) {
      const deadline = Date.now() + timeoutMs;
      const notSettled = (still: string) => new Error(`bots not settled after ${timeoutMs} ms: still ${still}`);
      const within = async <T>(still: string, promise: Promise<T>): Promise<T> => {
        let timer: NodeJS.Timeout | undefined;
        const expired = new Promise<never>((_resolve, reject) => {
          timer = setTimeout(() => reject(notSettled(still)), Math.max(0, deadline - Date.now()));
        });
        try {
          return await Promise.race([promise, expired]);
        } finally {
          clearTimeout(timer);
        }
      };
      const started = () => watched.reduce((sum, entry) => sum + entry.requests.started(), 0);
      const running = () => live().reduce((sum, entry) => sum + entry.requests.running(), 0);

      if (sweep) await within('waiting for a whole expiry sweep', Promise.all(live().map((entry) => entry.sweeps.whole())));
      for (;;) {
        const startedBefore = started();
        // Held requests are spread over the bots in any way; each may keep them all.
        await within('handling Slack requests', Promise.all(live().map((entry) => entry.requests.handled(holding))));
        let busy: string[] = [];
        if (holding === 0 && drains) {
          await within('draining threads', Promise.all(live().map((entry) => entry.bot.worker.idle())));
          const store = live()[0]?.bot.store;
          if (store) busy = await within('reading the busy threads', store.busyThreads({ limit: 10 }));
        }
        // Nothing new arrived while this pass waited, and nothing it waited for set anything off.
        if (busy.length === 0 && running() <= holding && started() === startedBefore) return;
        if (Date.now() >= deadline) throw notSettled(busy.length > 0 ? `work queued or in flight for ${busy.join(', ')}` : 'handling Slack requests');
        await new Promise((resolve) => setTimeout(resolve, BUSY_POLL_MS));
      }
    },
  };
}
