import type { BenchContext } from './bench-context.js';
import { bareClicks, botClicks, chatSdkClicks } from './click-requests.js';
import { type ChatSide, measureRound } from './measure-round.js';
import type { RunPhase } from './phase-timer.js';
import type { LoadResult } from './processes.js';
import type { BenchResults, LevelResult } from './results.js';
import { describeLevel, levelResult, type RoundSample } from './round-statistics.js';
import type { BenchScale } from './scale.js';
import { median, round, spreadOf } from './stats.js';
import { mentionRequest, type Card, type RequestSpec } from './workload.js';

export interface AckLatencyMeasurement {
  mention: LevelResult[];
  click: LevelResult[];
  repeatClick: LevelResult[];
  /** The clicks at the highest level, as decisions and resumed turns per second; undefined with no levels. */
  throughput: BenchResults['throughput'] | undefined;
  /** Per level, each first click followed from the moment it was sent to its card updated and its answer posted. */
  clickEndToEnd: BenchResults['clickEndToEnd'];
}

interface PhaseOptions {
  context: BenchContext;
  scale: BenchScale;
}

/**
 * Ack latency at each concurrency level, bot against bare app: mentions, then first clicks on the
 * cards those mentions posted, then repeat clicks on the same (by then decided) cards.
 */
export async function measureAckLatency(options: PhaseOptions & { phase: RunPhase }): Promise<AckLatencyMeasurement> {
  const { phase } = options;
  const mentions = await phase('mention bursts', () => measureMentionBursts(options));
  const clicks = await phase('click bursts', () => measureClickBursts({ ...options, cardsByLevel: mentions.cardsByLevel }));
  // Clicks on cards that are already decided (a second person, a double click): the bot answers
  // with an ephemeral "Already approved by …" and resumes nothing, so the work after the ack is
  // small. Compared with the first clicks, this separates the ack path from what follows it.
  const repeatClick = await phase('repeat-click bursts', () => measureRepeatClickBursts({ ...options, cardsByLevel: mentions.cardsByLevel }));
  return { mention: mentions.levels, click: clicks.levels, repeatClick, throughput: clicks.throughput, clickEndToEnd: clicks.endToEnd };
}

/** Mentions that each post a card; the cards, by level, are what the click phases click. */
async function measureMentionBursts(options: PhaseOptions): Promise<{ levels: LevelResult[]; cardsByLevel: Map<number, Card[]> }> {
  const { context, scale } = options;
  const levels: LevelResult[] = [];
  const cardsByLevel = new Map<number, Card[]>();
  for (const level of scale.levels) {
    const count = scale.requestsPerLevel[level] ?? 0;
    const rounds: RoundSample[] = [];
    const cards: Card[] = [];
    for (let roundIndex = 0; roundIndex < scale.rounds; roundIndex += 1) {
      const threads = context.newThreads(count);
      rounds.push(
        await measureRound({
          context,
          round: roundIndex,
          bareBurst: () => context.send({ url: context.bare.eventsUrl, concurrency: level, requests: context.newThreads(count).map((thread) => mentionRequest(thread, 'card')) }),
          botBurst: () => context.send({ url: context.bot.eventsUrl, concurrency: level, requests: threads.map((thread) => mentionRequest(thread, 'card')) }),
          botDrain: async () => {
            await context.waitForTurns({ threads, mode: 'card' });
            cards.push(...(await context.cardsFor(threads)));
          },
          chat: chatSdkSide({ context, concurrency: level, requests: () => context.newChatThreads(count).map((thread) => mentionRequest(thread, 'card')) }),
        }),
      );
    }
    cardsByLevel.set(level, cards);
    levels.push(levelResult({ concurrency: level, rounds }));
    context.log(`[bench]   mentions c=${level}: ${describeLevel(levels.at(-1)!)}`);
  }
  return { levels, cardsByLevel };
}

/** First clicks: each records a decision, updates the card and resumes the turn. */
async function measureClickBursts(
  options: PhaseOptions & { cardsByLevel: Map<number, Card[]> },
): Promise<{ levels: LevelResult[]; throughput: BenchResults['throughput'] | undefined; endToEnd: BenchResults['clickEndToEnd'] }> {
  const { context, scale } = options;
  const levels: LevelResult[] = [];
  const endToEnd: BenchResults['clickEndToEnd'] = [];
  let throughput: BenchResults['throughput'] | undefined;
  for (const level of scale.levels) {
    const decisionRates: number[] = [];
    const resumeRates: number[] = [];
    const cardUpdated: number[] = [];
    const answered: number[] = [];
    const rounds = await measureClickRounds({
      ...options,
      level,
      withChatSdk: true,
      drainFor: (cards) => async (measured) => {
        await context.waitForResumes(cards);
        const rates = clickRates({ context, cards, measured, allAnsweredAt: Date.now() });
        decisionRates.push(rates.decisionsPerSecond);
        resumeRates.push(rates.resumedTurnsPerSecond);
        // Counted from when each click was sent (the load generator's clock is this process's), so time queued to send shows too.
        cards.forEach((card, index) => {
          const sentAt = measured.startedAt + (measured.sentAtMs[index] ?? 0);
          const updatedAt = context.observer.firstUpdateAfter(card, sentAt);
          const answerAt = context.observer.answeredAt(card.thread);
          if (updatedAt !== undefined) cardUpdated.push(updatedAt - sentAt);
          if (answerAt !== undefined) answered.push(answerAt - sentAt);
        });
      },
    });
    const result = levelResult({ concurrency: level, rounds });
    levels.push(result);
    endToEnd.push(endToEndSummary(level, cardUpdated, answered));
    context.log(`[bench]   clicks c=${level}: ${describeLevel(result)}`);
    const last = endToEnd.at(-1)!;
    context.log(`[bench]   clicks c=${level} end to end: card updated p50 ${last.cardUpdatedMs.p50} ms p99 ${last.cardUpdatedMs.p99} ms | answer posted p50 ${last.answeredMs.p50} ms p99 ${last.answeredMs.p99} ms`);
    // Overwritten level by level on purpose: the throughput reported is the highest level's.
    throughput = {
      concurrency: level,
      clicks: scale.requestsPerLevel[level] ?? 0,
      rounds: scale.rounds,
      decisionsPerSecond: round(median(decisionRates), 1),
      resumedTurnsPerSecond: round(median(resumeRates), 1),
      botCpuMsPerClick: result.botCpuMsPerRequest,
    };
  }
  return { levels, throughput, endToEnd };
}

/** Repeat clicks: each is answered with an ephemeral, nothing is resumed. */
async function measureRepeatClickBursts(options: PhaseOptions & { cardsByLevel: Map<number, Card[]> }): Promise<LevelResult[]> {
  const { context, scale } = options;
  const levels: LevelResult[] = [];
  for (const level of scale.levels) {
    const rounds = await measureClickRounds({
      ...options,
      level,
      drainFor: (cards) => {
        // Counted before the burst: the bot's answers to this round are what comes on top.
        context.observer.poll();
        const ephemeralsBefore = context.observer.ephemeralCount();
        return () =>
          context.waitForSlack({
            done: () => context.observer.ephemeralCount() - ephemeralsBefore >= cards.length,
            message: `${cards.length} "already decided" answers`,
          });
      },
    });
    levels.push(levelResult({ concurrency: level, rounds }));
    context.log(`[bench]   repeat clicks c=${level}: ${describeLevel(levels.at(-1)!)}`);
  }
  return levels;
}

/**
 * The rounds of one click level. Each round clicks its own slice of the cards that level's mentions
 * posted, so the bursts are the same size as the mention bursts and no card is clicked twice within
 * a phase; the bare app gets as many clicks, on made-up cards (it only acks them). `drainFor` is
 * called just before each round and returns how to wait for the bot to finish that round's work.
 */
async function measureClickRounds(
  options: PhaseOptions & {
    cardsByLevel: Map<number, Card[]>;
    level: number;
    drainFor: (cards: Card[]) => (result: LoadResult) => Promise<void>;
    /** Also click the Chat SDK baseline (first clicks only: it has no "already decided" answer). */
    withChatSdk?: boolean;
  },
): Promise<RoundSample[]> {
  const { context, level } = options;
  const count = options.scale.requestsPerLevel[level] ?? 0;
  const levelCards = options.cardsByLevel.get(level) ?? [];
  const rounds: RoundSample[] = [];
  for (let roundIndex = 0; roundIndex < options.scale.rounds; roundIndex += 1) {
    const cards = levelCards.slice(roundIndex * count, (roundIndex + 1) * count);
    const botDrain = options.drainFor(cards);
    rounds.push(
      await measureRound({
        context,
        round: roundIndex,
        bareBurst: () => context.send({ url: context.bare.eventsUrl, concurrency: level, requests: bareClicks(cards.length) }),
        botBurst: () => context.send({ url: context.bot.eventsUrl, concurrency: level, requests: botClicks(cards) }),
        botDrain,
        ...(options.withChatSdk ? { chat: chatSdkSide({ context, concurrency: level, requests: () => chatSdkClicks(context.newChatThreads(cards.length)) }) } : {}),
      }),
    );
  }
  return rounds;
}

/** The Chat SDK bot's side of a round: a burst to it, drained when it has posted once per request. */
function chatSdkSide(options: { context: BenchContext; concurrency: number; requests: () => RequestSpec[] }): ChatSide | undefined {
  const { context } = options;
  const chat = context.chat;
  if (!chat) return undefined;
  let expected = 0;
  return {
    burst: () => {
      const requests = options.requests();
      context.observer.poll();
      expected = context.observer.chatSdkPostCount() + requests.length;
      return context.send({ url: chat.eventsUrl, concurrency: options.concurrency, requests });
    },
    drain: () => context.waitForSlack({ done: () => context.observer.chatSdkPostCount() >= expected, message: 'the Chat SDK bot\'s posts' }),
  };
}

/** Clicks per second, from the first click sent to the last card showing its decision, and to the last resumed answer. */
function clickRates(options: { context: BenchContext; cards: Card[]; measured: LoadResult; allAnsweredAt: number }): {
  decisionsPerSecond: number;
  resumedTurnsPerSecond: number;
} {
  const { cards, measured } = options;
  const decidedAt = cards.map((card) => options.context.observer.firstUpdateAfter(card, measured.startedAt));
  if (decidedAt.some((at) => at === undefined)) throw new Error('a clicked card was never updated with its decision');
  const lastDecision = Math.max(...(decidedAt as number[]));
  return {
    decisionsPerSecond: (cards.length * 1000) / Math.max(1, lastDecision - measured.startedAt),
    resumedTurnsPerSecond: (cards.length * 1000) / Math.max(1, options.allAnsweredAt - measured.startedAt),
  };
}

function endToEndSummary(concurrency: number, cardUpdated: number[], answered: number[]): BenchResults['clickEndToEnd'][number] {
  return { concurrency, clicks: answered.length, cardUpdatedMs: spreadOf(cardUpdated), answeredMs: spreadOf(answered) };
}
