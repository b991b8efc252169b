import { performance } from 'node:perf_hooks';
import { keyFamily } from './redis-memory.js';
import type { Redis } from 'ioredis';
import type { LoadResult } from './processes.js';
import type { CountingProxy, Flight } from './redis-proxy.js';
import { commandCalls, commandDelta } from './redis-inspect.js';
import type { RedisAccounting } from './results.js';
import type { BenchScale } from './scale.js';
import { round } from './stats.js';
import { clickRequest, mentionRequest, waitUntil, type Card, type RequestSpec, type SlackObserver, type Thread } from './workload.js';

const KEY_PREFIX = 'countersign:';

/**
 * Sequential turns and clicks on a bot whose Redis connection goes through the counting proxy, on
 * a Redis of its own, so every command and round trip can be attributed to one request.
 */
export async function redisAccounting(options: {
  scale: BenchScale;
  proxy: CountingProxy;
  inspector: Redis;
  observer: SlackObserver;
  newThreads: (count: number) => Thread[];
  sendOne: (request: RequestSpec) => Promise<LoadResult>;
  /** The user id clicking the index-th card (never the requester). */
  approver: (index: number) => string;
}): Promise<RedisAccounting> {
  const { proxy, observer } = options;
  const settle = async (done: () => boolean) => {
    await waitUntil(
      () => {
        observer.poll();
        return done();
      },
      { timeoutMs: 30_000, message: 'the accounted request to finish' },
    );
    await waitUntil(() => performance.now() - proxy.lastActivityAt() > 150 && proxy.unmatchedBytes() === 0, { timeoutMs: 30_000, message: 'Redis traffic to stop and every write to be reported' });
  };
  const mention = async (thread: Thread): Promise<Flight[]> => {
    const from = proxy.flights().length;
    await options.sendOne(mentionRequest(thread, 'card'));
    await settle(() => observer.hasCard(thread));
    return foreground(proxy.flights().slice(from));
  };
  const click = async (card: Card, index: number): Promise<Flight[]> => {
    const from = proxy.flights().length;
    await options.sendOne(clickRequest({ channel: card.thread.channel, threadTs: card.thread.threadTs, cardTs: card.cardTs, value: card.approveValue, user: options.approver(index) }));
    await settle(() => observer.hasAnswer(card.thread));
    return foreground(proxy.flights().slice(from));
  };

  // Warm-up: ioredis loads each script (EVALSHA, then EVAL on NOSCRIPT) the first time it runs.
  for (const thread of options.newThreads(options.scale.accounting.warmupCycles)) {
    await mention(thread);
    const [card] = observer.cards([thread]);
    if (card) await click(card, 0);
  }

  const turnThreads = options.newThreads(Math.max(options.scale.accounting.turns, options.scale.accounting.clicks));
  const beforeTurns = await commandCalls(options.inspector);
  const turnFlights: Flight[][] = [];
  for (const thread of turnThreads.slice(0, options.scale.accounting.turns)) turnFlights.push(await mention(thread));
  const afterTurns = await commandCalls(options.inspector);
  // Cards for the clicks (extra turns if more clicks than turns were asked for, not counted).
  for (const thread of turnThreads.slice(options.scale.accounting.turns)) await mention(thread);
  const cards = observer.cards(turnThreads.slice(0, options.scale.accounting.clicks));
  const beforeClicks = await commandCalls(options.inspector);
  const clickFlights: Flight[][] = [];
  for (const [index, card] of cards.entries()) clickFlights.push(await click(card, index + 1));
  const afterClicks = await commandCalls(options.inspector);

  const decisionPaths = clickFlights.map((flights) => splitAtResume(flights).decision);
  const resumePaths = clickFlights.map((flights) => splitAtResume(flights).resume);
  const perTurn = perRequest(turnFlights, commandDelta(beforeTurns, afterTurns));
  const perClick = perRequest(clickFlights, commandDelta(beforeClicks, afterClicks));
  return {
    perTurn: { ...perTurn, exampleTrace: describeFlights(turnFlights.at(-1) ?? []) },
    perClick: {
      ...perClick,
      exampleTrace: describeFlights(clickFlights.at(-1) ?? []),
      decisionRoundTrips: round(average(decisionPaths.map((flights) => flights.length))),
      decisionCommands: commandNames(decisionPaths),
      resumeRoundTrips: round(average(resumePaths.map((flights) => flights.length))),
      longerResumeTraces: longerThanMost(resumePaths).map(describeFlights),
    },
    method:
      "A second bot process connects to its own redis-server through a TCP proxy that parses the RESP commands it forwards. Turns and clicks are sent one at a time; each one's traffic is what the proxy sees until the expected Slack effect (card, resumed answer) has happened and Redis has been quiet for 150 ms. A round trip is one write of a command, a pipeline or a MULTI/EXEC block by the bot's client (ioredis writes each with one socket write; EVALSHA is one command): every bot process is started with bench/lib/redis-write-reporter.ts preloaded, which reports the length of each write, and the proxy cuts the bytes it forwards there, so two writes TCP delivers together still count twice. Commands written in the same tick without waiting for each other are separate round trips here though they overlap in time. The sweepers' timer polls (flights of only ZRANGE/ZRANGEBYSCORE, every few seconds) and the writes of the idle waits for handed-off work (BLMPOP, every second) are left out; a wait whose reply handed work over (with COUNTERSIGN_ROLE=split, the worker picking up the turn or resume the receiver queued) counts as one round trip of the request. Server commands come from INFO commandstats deltas over the same batch (calls made inside Lua scripts count there too). A click's decision path is its traffic up to and including the decision's own script on the step (which queues the resume in the same write); the rest is the resumed turn.",
  };
}

/** The paths with more round trips than the most common count. */
function longerThanMost(paths: Flight[][]): Flight[][] {
  const counts = new Map<number, number>();
  for (const path of paths) counts.set(path.length, (counts.get(path.length) ?? 0) + 1);
  const usual = [...counts.entries()].sort((left, right) => right[1] - left[1])[0]?.[0] ?? 0;
  return paths.filter((path) => path.length > usual);
}

/** One line per round trip: its commands with the key family they touch (`EVALSHA queue`). */
function describeFlights(flights: Flight[]): string[] {
  return flights.map((flight) =>
    flight.commands
      .map((command) => {
        const family = command.key?.startsWith(KEY_PREFIX) ? keyFamily(command.key, KEY_PREFIX) : undefined;
        return family ? `${command.name} ${family}` : command.name;
      })
      .join(' + '),
  );
}

/**
 * Drops the sweepers' timer polls (read-only range scans of the schedules) and the writes of the idle
 * waits for handed-off work (BLMPOP, or BLPOP on Redis 6, once a second), which belong to no request.
 * A wait whose reply handed work over (with COUNTERSIGN_ROLE split, the worker's pick-up of the turn
 * the receiver queued) is the proxy's `delivery` flight and is kept: that round trip carried the turn.
 */
const SWEEP_POLLS = new Set(['ZRANGE', 'ZRANGEBYSCORE', 'BLPOP', 'BLMPOP']);
export function foreground(flights: Flight[]): Flight[] {
  return flights.filter((flight) => flight.delivery === true || !flight.commands.every((command) => SWEEP_POLLS.has(command.name)));
}

/**
 * A click's traffic: its decision path up to the decision's own script (on the step's key; it
 * queues the resume in the same write), then the resumed turn.
 */
export function splitAtResume(flights: Flight[]): { decision: Flight[]; resume: Flight[] } {
  const index = flights.findIndex((flight) => flight.commands.some((command) => (command.name === 'EVALSHA' || command.name === 'EVAL') && command.key?.includes(':step:')));
  return index === -1 ? { decision: flights, resume: [] } : { decision: flights.slice(0, index + 1), resume: flights.slice(index + 1) };
}

function perRequest(requests: Flight[][], serverDelta: Record<string, number>): RedisAccounting['perTurn'] {
  const count = Math.max(1, requests.length);
  const serverCommands: Record<string, number> = {};
  for (const [command, calls] of Object.entries(serverDelta)) serverCommands[command] = round(calls / count);
  return {
    requests: requests.length,
    roundTrips: round(average(requests.map((flights) => flights.length))),
    clientCommands: round(average(requests.map((flights) => flights.reduce((sum, flight) => sum + flight.commands.length, 0)))),
    clientCommandNames: commandNames(requests),
    serverCommands: round(Object.values(serverDelta).reduce((sum, calls) => sum + calls, 0) / count),
    serverCommandBreakdown: serverCommands,
  };
}

/** Command names per request, averaged: { GET: 1, EVALSHA: 2, … }. */
function commandNames(requests: Flight[][]): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const flights of requests) for (const flight of flights) for (const command of flight.commands) totals[command.name] = (totals[command.name] ?? 0) + 1;
  const count = Math.max(1, requests.length);
  return Object.fromEntries(Object.entries(totals).map(([name, total]) => [name, round(total / count)]));
}

function average(values: number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((sum, value) => sum + value, 0) / values.length;
}
