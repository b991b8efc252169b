import { botClicks } from './click-requests.js';
import { waitForCpuIdle, type LoadGenerator, type LoadResult } from './processes.js';
import { mentionRequest, SIGNING_SECRET, waitUntil, type Card, type MentionMode, type RequestSpec, type SlackObserver, type Thread } from './workload.js';

/** Generous: on a loaded 2-core machine thousands of queued turns take minutes to drain. */
export const DRAIN_TIMEOUT_MS = 15 * 60 * 1000;

/** Sending signed requests to the processes under test, and waiting for what the bot does about them. */
export interface BurstHelpers {
  /** Sends the requests to `url` through the load generator, `concurrency` in flight. */
  send(options: { url: string; concurrency: number; ratePerSecond?: number; requests: RequestSpec[] }): Promise<LoadResult>;
  /** Polls the fake Slack until `done` holds (or the drain timeout, naming `message`, runs out). */
  waitForSlack(options: { done: () => boolean; message: string }): Promise<void>;
  /** Waits until every turn has posted its card (or, in text mode, its answer). */
  waitForTurns(options: { threads: Thread[]; mode: MentionMode }): Promise<void>;
  /** Waits until every approved call's resumed turn has answered in its thread. */
  waitForResumes(cards: Card[]): Promise<void>;
  /** Mentions the bot in fresh threads and waits until every turn is done. */
  mentionBurst(options: { threads: Thread[]; mode: MentionMode; concurrency: number }): Promise<LoadResult>;
  /** Approves cards and waits until every resumed turn has answered. */
  clickBurst(options: { cards: Card[]; concurrency: number }): Promise<LoadResult>;
  /** The cards posted in these threads; throws unless every thread has one. */
  cardsFor(threads: Thread[]): Promise<Card[]>;
  /** Waits until every process of the measured bot (with BENCH_ROLES=split, the receiver and the worker) is idle. */
  waitForBotIdle(options?: { windowMs?: number }): Promise<void>;
}

export function createBurstHelpers(options: { loadGenerator: LoadGenerator; observer: SlackObserver; botEventsUrl: string; botPids: number[]; idleWindowMs: number }): BurstHelpers {
  const { loadGenerator, observer, botEventsUrl, botPids, idleWindowMs } = options;
  const helpers: BurstHelpers = {
    send: ({ url, concurrency, ratePerSecond, requests }) => loadGenerator.run({ url, signingSecret: SIGNING_SECRET, concurrency, ...(ratePerSecond === undefined ? {} : { ratePerSecond }), requests }),
    waitForSlack: ({ done, message }) =>
      waitUntil(
        () => {
          observer.poll();
          return done();
        },
        { timeoutMs: DRAIN_TIMEOUT_MS, message, intervalMs: 50 },
      ),
    waitForTurns: ({ threads, mode }) =>
      helpers.waitForSlack({
        done: () => threads.every((thread) => (mode === 'card' || mode === 'slow-card' ? observer.hasCard(thread) : observer.hasTextAnswer(thread))),
        message: `${threads.length} ${mode} turns`,
      }),
    waitForResumes: (cards) =>
      helpers.waitForSlack({ done: () => cards.every((card) => observer.hasAnswer(card.thread)), message: `${cards.length} resumed turns` }),
    mentionBurst: async ({ threads, mode, concurrency }) => {
      const result = await helpers.send({ url: botEventsUrl, concurrency, requests: threads.map((thread) => mentionRequest(thread, mode)) });
      await helpers.waitForTurns({ threads, mode });
      return result;
    },
    clickBurst: async ({ cards, concurrency }) => {
      const result = await helpers.send({ url: botEventsUrl, concurrency, requests: botClicks(cards) });
      await helpers.waitForResumes(cards);
      return result;
    },
    cardsFor: async (threads) => {
      // The card is posted before its ts is stored with the step (by the process that ran the turn); let those writes land.
      await helpers.waitForBotIdle();
      const cards = observer.cards(threads);
      if (cards.length !== threads.length) throw new Error(`expected ${threads.length} cards, found ${cards.length}`);
      return cards;
    },
    waitForBotIdle: (idleOptions) => waitForCpuIdle(botPids, { windowMs: idleWindowMs, ...idleOptions }),
  };
  return helpers;
}
