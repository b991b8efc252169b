import type { BenchContext } from './bench-context.js';
import { bareClicks, botClicks, chatSdkClicks } from './click-requests.js';
import type { LoadResult } from './processes.js';
import type { OpenLoopLevel } from './results.js';
import type { BenchScale } from './scale.js';
import { ratio, round, spreadOf, summarize } from './stats.js';
import { mentionRequest, type RequestSpec } from './workload.js';

/** Requests in flight the load generator allows in open loop: far above what a healthy server needs. */
const OPEN_LOOP_IN_FLIGHT_CAP = 1_000;

type Side = 'bare' | 'chat' | 'bot';

/**
 * Open-loop arrivals: at each rate, mentions arrive at a fixed pace for a few seconds (each bot
 * mention posts a card), then clicks on those cards arrive at the same pace. The bare app and the
 * Chat SDK bot get the same schedule. Latency counts from when each request was due, so a server
 * that falls behind shows its queue. For the bot's clicks, the answer posted is timed from the
 * same moment: Approve → answer at a steady rate, not in a burst.
 */
export async function measureOpenLoop(options: { context: BenchContext; scale: BenchScale }): Promise<OpenLoopLevel[]> {
  const { context, scale } = options;
  const levels: OpenLoopLevel[] = [];
  for (const [rateIndex, ratePerSecond] of scale.openLoop.rates.entries()) {
    const count = Math.max(1, Math.round(ratePerSecond * scale.openLoop.seconds));
    const sides: Side[] = rotate(context.chat ? ['bare', 'chat', 'bot'] : ['bare', 'bot'], rateIndex);
    const threads = context.newThreads(count);
    const mentions = new Map<Side, LoadResult>();
    for (const side of sides) {
      const sideThreads = side === 'bot' ? threads : side === 'chat' ? context.newChatThreads(count) : context.newThreads(count);
      mentions.set(
        side,
        await sendAndDrain({ context, side, ratePerSecond, requests: sideThreads.map((thread) => mentionRequest(thread, 'card')), botDrain: () => context.waitForTurns({ threads, mode: 'card' }) }),
      );
    }
    const cards = await context.cardsFor(threads);
    const clicks = new Map<Side, LoadResult>();
    for (const side of sides) {
      const requests = side === 'bot' ? botClicks(cards) : side === 'chat' ? chatSdkClicks(context.newChatThreads(count)) : bareClicks(count);
      clicks.set(side, await sendAndDrain({ context, side, ratePerSecond, requests, botDrain: () => context.waitForResumes(cards) }));
    }
    const botClicksResult = clicks.get('bot') as LoadResult;
    const answered = cards.flatMap((card, index) => {
      const answerAt = context.observer.answeredAt(card.thread);
      const dueAt = botClicksResult.startedAt + (botClicksResult.sentAtMs[index] ?? 0);
      return answerAt === undefined ? [] : [answerAt - dueAt];
    });
    for (const [kind, results] of [
      ['mention', mentions],
      ['click', clicks],
    ] as const) {
      levels.push(openLoopLevel({ kind, ratePerSecond, results, ...(kind === 'click' ? { answered } : {}) }));
      context.log(`[bench]   open loop ${kind}s at ${ratePerSecond}/s: ${describeOpenLoop(levels.at(-1) as OpenLoopLevel)}`);
    }
  }
  return levels;
}

/** Sends one side its schedule, then waits until the work it caused is done, so the next side runs on a quiet machine. */
async function sendAndDrain(options: { context: BenchContext; side: Side; ratePerSecond: number; requests: RequestSpec[]; botDrain: () => Promise<void> }): Promise<LoadResult> {
  const { context, side } = options;
  const server = side === 'bot' ? context.bot : side === 'chat' ? context.chat : context.bare;
  if (!server) throw new Error(`no ${side} server running`);
  context.observer.poll();
  const chatPostsExpected = context.observer.chatSdkPostCount() + options.requests.length;
  const result = await context.send({ url: server.eventsUrl, concurrency: OPEN_LOOP_IN_FLIGHT_CAP, ratePerSecond: options.ratePerSecond, requests: options.requests });
  if (side === 'chat') await context.waitForSlack({ done: () => context.observer.chatSdkPostCount() >= chatPostsExpected, message: "the Chat SDK bot's posts" });
  if (side === 'bot') await options.botDrain();
  if (side === 'bot') await context.waitForBotIdle();
  else await context.waitForIdle(server.handle.pid);
  return result;
}

function openLoopLevel(options: { kind: 'mention' | 'click'; ratePerSecond: number; results: Map<Side, LoadResult>; answered?: number[] }): OpenLoopLevel {
  const summary = (side: Side) => {
    const result = options.results.get(side);
    return result ? summarize(result.latenciesMs, result.statuses) : undefined;
  };
  const bot = summary('bot');
  const bare = summary('bare');
  const chat = summary('chat');
  if (!bot || !bare) throw new Error('open loop: the bot and the bare app must both run');
  const botResult = options.results.get('bot') as LoadResult;
  const answers = options.answered ?? [];
  return {
    kind: options.kind,
    ratePerSecond: options.ratePerSecond,
    requests: bot.requests,
    achievedRatePerSecond: round((bot.requests * 1000) / Math.max(1, botResult.wallMs), 1),
    bot,
    bare,
    ratioP99: ratio(bot.p99, bare.p99),
    ...(chat ? { chatSdk: chat, chatSdkRatioP99: ratio(chat.p99, bare.p99), botOverChatSdkP99: ratio(bot.p99, chat.p99) } : {}),
    ...(answers.length > 0
      ? { answeredMs: spreadOf(answers) }
      : {}),
  };
}

export function describeOpenLoop(level: OpenLoopLevel): string {
  const chat = level.chatSdk ? ` | Chat SDK p99 ${level.chatSdk.p99} ms (${level.chatSdkRatioP99}× bare)` : '';
  const answered = level.answeredMs ? ` | answer posted p50 ${level.answeredMs.p50} ms p99 ${level.answeredMs.p99} ms` : '';
  return `bot p50 ${level.bot.p50} ms p99 ${level.bot.p99} ms (>3 s: ${level.bot.over3s}) | bare p99 ${level.bare.p99} ms | ratio ${level.ratioP99}${chat}${answered}`;
}

function rotate<T>(items: T[], by: number): T[] {
  const shift = by % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}
