import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import type { BenchContext } from './bench-context.js';
import { approver, botClicks } from './click-requests.js';
import { preciseCpuMs } from './processes.js';
import { foreground, splitAtResume } from './redis-accounting.js';
import { startCountingProxy } from './redis-proxy.js';
import type { HistorySweepPoint } from './results.js';
import type { BenchScale } from './scale.js';
import { median, round } from './stats.js';
import { clickRequest, createThreadFactory, mentionRequest, threadMentionRequest, waitUntil, type Thread } from './workload.js';

/** Filler per earlier message, so a long history weighs what a real thread's would (~0.5 KB a message). */
const PADDING_CHARACTERS = 400;

/**
 * What a resumed turn costs as its thread grows: threads are built up to 1, 10, 100 … earlier
 * exchanges (text mentions, one at a time), then each gets one more mention that posts a card, and
 * the card is approved. For that click, measured one at a time on a bot behind the counting Redis
 * proxy: Redis round trips and bytes written from the click until the answer, the bot's CPU, and
 * the time from the click's ack to the answer, once the bot has walked the click path often enough for
 * V8 to compile it. Flat columns mean the cost does not grow with the history (append-only writes);
 * bytes growing with the history mean something rewrites it.
 */
export async function measureHistorySweep(options: { context: BenchContext; scale: BenchScale }): Promise<HistorySweepPoint[]> {
  const { context, scale } = options;
  // A Redis of its own: the round-trips phase's bot still runs on the accounting Redis, and in a split
  // deployment its worker would take some of these resumes off the shared queue, out of the count.
  const redis = await context.startRedis();
  const proxy = await startCountingProxy({ host: '127.0.0.1', port: redis.port }, { clientWrites: true });
  context.cleanup.push(() => proxy.close());
  const bot = await context.startBot({ name: 'countersign-history', redisUrl: proxy.url, redisWrites: { reportPort: proxy.reportPort as number, redisPort: proxy.port } });
  // The turns' CPU: with BENCH_ROLES=split the worker beside the receiver runs them.
  const pids = [bot.handle.pid, context.workerOf('countersign-history')?.handle.pid].filter((pid) => pid !== undefined);
  const cpuMs = () => pids.reduce((sum, pid) => sum + preciseCpuMs(pid), 0);
  const inspector = new Redis(redis.url);
  context.cleanup.push(() => inspector.quit());
  const newThreads = createThreadFactory('H');
  const sendOne = (body: ReturnType<typeof threadMentionRequest>) => context.send({ url: bot.eventsUrl, concurrency: 1, requests: [body] });
  const settle = async (done: () => boolean) => {
    await context.waitForSlack({ done, message: 'the history sweep turn' });
    await waitUntil(() => performance.now() - proxy.lastActivityAt() > 150 && proxy.unmatchedBytes() === 0, { timeoutMs: 30_000, message: 'Redis traffic to stop and every write to be reported' });
  };
  // The resume path warm first: measured cold, each of a handful of clicks ran largely in V8's
  // interpreter and cost the bot thread 15-30 ms of CPU (about 10 ms for the whole process once
  // compiled), which hid anything the history adds.
  const warmThreads = newThreads(scale.warmup.cardCycles);
  await context.send({ url: bot.eventsUrl, concurrency: scale.warmup.concurrency, requests: warmThreads.map((thread) => mentionRequest(thread, 'card')) });
  await context.waitForTurns({ threads: warmThreads, mode: 'card' });
  await context.waitForIdle(pids);
  const warmCards = context.observer.cards(warmThreads);
  await context.send({ url: bot.eventsUrl, concurrency: scale.warmup.concurrency, requests: botClicks(warmCards) });
  await context.waitForResumes(warmCards);
  const points: HistorySweepPoint[] = [];
  for (const exchanges of scale.historySweep.exchanges) {
    const threads = newThreads(scale.historySweep.threads);
    for (const thread of threads) {
      for (let sequence = 0; sequence < exchanges; sequence += 1) {
        await sendOne(threadMentionRequest({ thread, mode: 'text', sequence, paddingCharacters: PADDING_CHARACTERS }));
        await context.waitForSlack({ done: () => context.observer.textAnswerCount(thread) > sequence, message: `exchange ${sequence + 1} of ${exchanges}` });
      }
      await sendOne(threadMentionRequest({ thread, mode: 'card', sequence: exchanges }));
      await settle(() => context.observer.hasCard(thread));
    }
    await context.waitForIdle(pids);
    const idleCpuPerMs = await idleCpuRate(cpuMs, scale.idleWindowMs);
    const samples = [];
    for (const [index, thread] of threads.entries()) samples.push(await measureClick({ context, proxy, cpuMs, idleCpuPerMs, thread, index, settle, sendClick: (request) => context.send({ url: bot.eventsUrl, concurrency: 1, requests: [request] }) }));
    const historyBytes = await storedHistoryBytes(inspector, threads);
    points.push({
      exchanges,
      threads: threads.length,
      historyBytes: round(median(historyBytes)),
      resumeRoundTrips: round(median(samples.map((sample) => sample.roundTrips))),
      resumeBytesWritten: round(median(samples.map((sample) => sample.bytes))),
      botCpuMsPerResume: round(median(samples.map((sample) => sample.cpuMs))),
      ackToAnswerMs: round(median(samples.map((sample) => sample.ackToAnswerMs))),
    });
    const last = points.at(-1) as HistorySweepPoint;
    context.log(
      `[bench]   history of ${exchanges} exchanges (${last.historyBytes} B stored): resumed turn ${last.resumeRoundTrips} round trips, ${last.resumeBytesWritten} B sent to Redis, ${last.botCpuMsPerResume} ms CPU, ack → answer ${last.ackToAnswerMs} ms`,
    );
  }
  await bot.handle.stop();
  return points;
}

async function measureClick(options: {
  context: BenchContext;
  proxy: Awaited<ReturnType<typeof startCountingProxy>>;
  /** The CPU the processes running the turns have used, ms. */
  cpuMs: () => number;
  idleCpuPerMs: number;
  thread: Thread;
  index: number;
  settle: (done: () => boolean) => Promise<void>;
  sendClick: (request: ReturnType<typeof clickRequest>) => Promise<{ latenciesMs: number[]; startedAt: number }>;
}): Promise<{ roundTrips: number; bytes: number; cpuMs: number; ackToAnswerMs: number }> {
  const { context, proxy, thread } = options;
  const [card] = context.observer.cards([thread]);
  if (!card) throw new Error(`no card in history-sweep thread ${thread.threadTs}`);
  const from = proxy.flights().length;
  const cpuBefore = options.cpuMs();
  const startedAt = performance.now();
  const sent = await options.sendClick(clickRequest({ channel: thread.channel, threadTs: thread.threadTs, cardTs: card.cardTs, value: card.approveValue, user: approver(options.index) }));
  await options.settle(() => context.observer.hasAnswer(thread));
  // The click's share: the bot's timers and health checks keep running while the sweep waits for quiet.
  const cpu = options.cpuMs() - cpuBefore - options.idleCpuPerMs * (performance.now() - startedAt);
  const { resume: flights } = splitAtResume(foreground(proxy.flights().slice(from)));
  // An answer with no resume traffic behind the proxy means some other process ran it: the count would be a silent 0.
  if (flights.length === 0) throw new Error(`history sweep: the resumed turn of thread ${thread.threadTs} sent nothing through the counting proxy`);
  const ackedAt = sent.startedAt + (sent.latenciesMs[0] ?? 0);
  return {
    roundTrips: flights.length,
    bytes: flights.reduce((sum, flight) => sum + flight.bytes, 0),
    cpuMs: cpu,
    ackToAnswerMs: (context.observer.answeredAt(thread) ?? Number.NaN) - ackedAt,
  };
}

/** Bytes Redis holds for each thread's history (MEMORY USAGE of its keys that hold messages). */
async function storedHistoryBytes(inspector: Redis, threads: Thread[]): Promise<number[]> {
  const sizes: number[] = [];
  for (const thread of threads) {
    const keys = (await inspector.keys(`*${thread.channel}*${thread.threadTs}*`)).filter((key) => /thread/.test(key));
    let bytes = 0;
    for (const key of keys) bytes += Number((await inspector.memory('USAGE', key)) ?? 0);
    sizes.push(bytes);
  }
  return sizes;
}

/**
 * The CPU an idle bot uses per ms of wall time (its timers, the load monitor): the least of a few
 * windows of the run's idle window (300 ms in the full run), so a late collection of the work before
 * does not count as idling.
 */
async function idleCpuRate(cpuMs: () => number, windowMs: number): Promise<number> {
  const rates: number[] = [];
  for (let window = 0; window < 4; window += 1) {
    const before = cpuMs();
    const startedAt = performance.now();
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    rates.push((cpuMs() - before) / (performance.now() - startedAt));
  }
  return Math.min(...rates);
}
