import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { BenchResults, LevelResult } from './results.js';
import { ratioSpread } from './round-statistics.js';

const MIB = 1024 * 1024;

export function writeResults(results: BenchResults, path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`);
}

function table(header: string[], rows: Array<Array<string | number>>): string {
  const cells = [header, ...rows.map((row) => row.map(String))];
  const widths = header.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  const line = (row: string[]) => `| ${row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(' | ')} |`;
  return [line(cells[0] as string[]), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...cells.slice(1).map(line)].join('\n');
}

function loopDelayRows(kind: string, levels: LevelResult[]): Array<Array<string | number>> {
  return levels.flatMap((level) =>
    level.eventLoopDelay && level.ackBreakdown
      ? [
          [
            kind,
            level.concurrency,
            `${level.ackBreakdown.bot.beforeReadMs.p99} / ${level.ackBreakdown.bot.readToAckMs.p99}`,
            `${level.ackBreakdown.bare.beforeReadMs.p99} / ${level.ackBreakdown.bare.readToAckMs.p99}`,
            `${level.eventLoopDelay.bot.p99Ms} / ${level.eventLoopDelay.bot.maxMs}`,
            `${level.eventLoopDelay.bare.p99Ms} / ${level.eventLoopDelay.bare.maxMs}`,
            level.botCpuMsPerRequest,
            level.bareCpuMsPerRequest,
          ],
        ]
      : [],
  );
}

function latencyRows(kind: string, levels: LevelResult[]): Array<Array<string | number>> {
  return levels.map((level) => [
    kind,
    level.concurrency,
    level.bot.requests,
    level.bot.p50,
    level.bot.p99,
    level.bare.p50,
    level.bare.p99,
    ratioSpread(level.roundRatiosP50),
    ratioSpread(level.roundRatiosP99),
    ratioSpread(level.noiseFloor.roundRatiosP99),
    level.pooledRatioP99,
    level.chatSdk ? level.chatSdk.latency.p99 : '–',
    level.chatSdk ? ratioSpread(level.chatSdk.roundRatiosP99) : '–',
    level.chatSdk ? level.chatSdk.botOverChatP99 : '–',
    `${level.bot.over1s} / ${level.bot.over3s}`,
    `${level.bare.over1s} / ${level.bare.over3s}`,
    level.bot.errors + level.bare.errors + (level.chatSdk?.latency.errors ?? 0),
  ]);
}

/** The human-readable summary printed at the end of a run (Markdown tables). */
export function formatResults(results: BenchResults): string {
  const { machine, redis, rss, cpu, throughput } = results;
  const sections = [
    `countersign benchmark — ${results.scale} scale, ${results.startedAt}, ${(results.durationMs / 1000).toFixed(0)} s`,
    `machine: ${machine.cpus} × ${machine.cpuModel}, ${(machine.totalMemoryBytes / 1024 ** 3).toFixed(1)} GiB, node ${machine.node}, ${machine.platform}, ${machine.redis.split(' ').slice(0, 3).join(' ')}; load average ${machine.loadAverageAtStart.join(' ')} at start, ${machine.loadAverageAtEnd.join(' ')} at end`,
    '',
    `Ack latency (ms, request sent → response received; bare = Bolt app whose listeners only ack; Chat SDK = a Chat SDK bot with Redis state whose mention posts a card and whose click posts the decision; ${results.ackLatency.click[0]?.rounds ?? 0} interleaved rounds per level, latencies pooled; ratios are per round, shown as median (min–max) over rounds)`,
    table(
      ['kind', 'concurrency', 'requests', 'bot p50', 'bot p99', 'bare p50', 'bare p99', 'p50 ratio', 'p99 ratio', 'bare ÷ bare p99 (noise)', 'pooled p99 ratio', 'Chat SDK p99', 'Chat SDK ÷ bare p99', 'bot ÷ Chat SDK p99', 'bot >1s / >3s', 'bare >1s / >3s', 'errors'],
      [...latencyRows('mention', results.ackLatency.mention), ...latencyRows('click', results.ackLatency.click), ...latencyRows('repeat click', results.ackLatency.repeatClick)],
    ),
    '',
    `Inside the servers (ms): p99 of sent → request read by the server / read → ack sent; event-loop delay during the bursts (median over rounds of the p99 / max); CPU per request (the bot's: every process of it, ${cpu.processes}, with the work the requests caused)`,
    table(
      ['kind', 'concurrency', 'bot wait / handle p99', 'bare wait / handle p99', 'bot loop delay', 'bare loop delay', 'bot CPU ms/req', 'bare CPU ms/req'],
      [...loopDelayRows('mention', results.ackLatency.mention), ...loopDelayRows('click', results.ackLatency.click), ...loopDelayRows('repeat click', results.ackLatency.repeatClick)],
    ),
    '',
    `Approve → what a person sees, closed loop: ${results.closedLoopClicks.lanes} threads in flight, each clicking its next card once its answer is posted (ms from the click sent, p50 / p99 / max over the clicks; the lanes' first clicks, sent at one instant, left out)`,
    table(
      ['model', 'clicks', 'answers/s', 'ack', 'card updated', 'tool started', 'answer posted', 'answer p99 per round', 'first wave worst'],
      [results.closedLoopClicks, results.closedLoopClicksSlowModel].map((loop) => [
        loop.modelMs === 0 ? 'instant' : `${loop.modelMs} ms`,
        loop.clicks,
        loop.answersPerSecond,
        ...[loop.ackedMs, loop.cardUpdatedMs, loop.toolStartedMs, loop.answeredMs].map((stage) => `${stage.p50} / ${stage.p99} / ${stage.max}`),
        loop.p99PerRound.join(', '),
        loop.firstWaveMaxMs,
      ]),
    ),
    '',
    'First clicks of the bursts end to end (ms, from when each click was sent to its card showing the decision and to the resumed answer posted; the clicks come as fast as they are acked, so the answer column includes the queue of resumed turns behind them)',
    table(
      ['concurrency', 'clicks', 'card updated p50 / p99 / max', 'answer posted p50 / p99 / max'],
      results.clickEndToEnd.map((level) => [
        level.concurrency,
        level.clicks,
        `${level.cardUpdatedMs.p50} / ${level.cardUpdatedMs.p99} / ${level.cardUpdatedMs.max}`,
        `${level.answeredMs.p50} / ${level.answeredMs.p99} / ${level.answeredMs.max}`,
      ]),
    ),
    '',
    'Open-loop arrivals (requests due at a fixed rate for a few seconds: mentions, then clicks on the cards they posted; latency in ms from when each request was due, so a server that falls behind shows its queue)',
    table(
      ['kind', 'rate/s', 'requests', 'bot p50', 'bot p99', 'bot >3s', 'bare p99', 'bot ÷ bare p99', 'Chat SDK p99', 'bot ÷ Chat SDK p99', 'answer posted p50 / p99'],
      results.openLoop.map((level) => [
        level.kind,
        level.ratePerSecond,
        level.requests,
        level.bot.p50,
        level.bot.p99,
        level.bot.over3s,
        level.bare.p99,
        level.ratioP99,
        level.chatSdk?.p99 ?? '–',
        level.botOverChatSdkP99 ?? '–',
        level.answeredMs ? `${level.answeredMs.p50} / ${level.answeredMs.p99}` : '–',
      ]),
    ),
    '',
    'A resumed turn as the thread grows (one approved call per thread, measured alone behind the counting Redis proxy; medians over the threads)',
    table(
      ['earlier exchanges', 'history stored (B)', 'resumed turn round trips', 'bytes sent to Redis', 'bot CPU ms (click → answer)', 'ack → answer ms'],
      results.historySweep.map((point) => [point.exchanges, point.historyBytes, point.resumeRoundTrips, point.resumeBytesWritten, point.botCpuMsPerResume, point.ackToAnswerMs]),
    ),
    '',
    `Turn throughput with a ${results.turnThroughput.modelMs} ms model, mentions sent to one all-in-one process and to a receiver (COUNTERSIGN_ROLE) with one and two worker processes, each warmed with ${results.scaleSettings.turnThroughput.warmUpTurns} turns first (not measured), then measured once per round in a rotating order; medians over rounds, turns/s as median (min–max)${results.turnThroughput.roundTwoWorkersOverOne === undefined ? '' : `; two workers over one, per round: ${ratioSpread(results.turnThroughput.roundTwoWorkersOverOne)}×`}`,
    table(
      ['deployment', 'processes running turns', 'turns per round', 'rounds', 'turns/s', 'most model calls at once', 'CPU ms per turn (those processes)'],
      results.turnThroughput.runs.map((run) => [run.deployment, run.workers, run.turns, run.rounds, ratioSpread(run.roundTurnsPerSecond), run.peakConcurrentModelCalls, run.workerCpuMsPerTurn]),
    ),
    '',
    table(
      ['metric', 'value'],
      [
        [`decisions per second (one process, bursts of ${throughput.clicks} clicks at concurrency ${throughput.concurrency}, median of ${throughput.rounds})`, throughput.decisionsPerSecond],
        ['resumed turns per second (same burst, to the answer in the thread)', throughput.resumedTurnsPerSecond],
        ['Redis round trips per click: decision path (click → decision → card)', redis.perClick.decisionRoundTrips],
        ['Redis round trips per click: resumed turn', redis.perClick.resumeRoundTrips],
        ['Redis round trips per click: total', redis.perClick.roundTrips],
        ['Redis commands per click: sent by the bot / executed by Redis', `${redis.perClick.clientCommands} / ${redis.perClick.serverCommands}`],
        ['Redis round trips per turn (mention → card)', redis.perTurn.roundTrips],
        ['Redis commands per turn: sent by the bot / executed by Redis', `${redis.perTurn.clientCommands} / ${redis.perTurn.serverCommands}`],
        ['Redis bytes per pending approval (step hash + schedule entries)', redis.memory.bytesPerPendingApproval],
        ['  of which step hash / schedule entries', `${redis.memory.stepHashBytesPerPending} / ${redis.memory.scheduleBytesPerPending}`],
        ['Redis bytes of thread history per thread (stored once per thread)', redis.memory.historyBytesPerThread],
        ['history stored once per thread, not in the step', redis.memory.historyStoredOncePerThread ? 'yes' : 'NO'],
        ['Redis used_memory growth per pending approval, all-in', redis.memory.usedMemoryBytesPerPendingAllIn],
        ...rss.points.map(
          (point) =>
            [
              `RSS of the bot's ${rss.process} at ${point.pending} pending (MiB)${point.afterFullGc ? ' — after a forced full GC: RSS / JS heap used' : ''}`,
              `${(point.rssBytes / MIB).toFixed(1)}${point.afterFullGc ? ` — ${(point.afterFullGc.rssBytes / MIB).toFixed(1)} / ${(point.afterFullGc.heapUsedBytes / MIB).toFixed(1)}` : ''}`,
            ] as [string, string],
        ),
        ['RSS ratio, last point ÷ 0 pending (settled / after a forced full GC)', `${rss.ratioMaxToZero} / ${rss.ratioMaxToZeroAfterFullGc ?? 'n/a'}`],
        [`bot CPU ms per turn, model excluded (${cpu.turnsMeasured} turns; ${cpu.processes})`, cpu.msPerTurn],
        ...(Object.keys(cpu.msPerTurnByProcess).length > 1 ? [[`  of which ${Object.keys(cpu.msPerTurnByProcess).join(' / ')}`, Object.values(cpu.msPerTurnByProcess).join(' / ')] as [string, string]] : []),
        [`bot CPU ms per click, resumed turn included (${cpu.processes})`, cpu.msPerClickWithResume],
        ['turns per second while creating pending approvals', cpu.turnsPerSecond],
        ['threads given the resumed answer twice (the fake Slack, every phase)', `${results.resumedAnswers.answeredMoreThanOnce} of ${results.resumedAnswers.threads}`],
        [
          `approved calls started twice / finished twice (audit trails of ${results.approvedCalls.redises} Redis, read once settled${results.approvedCalls.unsettledRedises > 0 ? `; ${results.approvedCalls.unsettledRedises} NOT settled` : ''})`,
          `${results.approvedCalls.startedMoreThanOnce} / ${results.approvedCalls.finishedMoreThanOnce} of ${results.approvedCalls.calls}`,
        ],
        [`of those, threads approved with ${results.twoProcessApprovals.turnRunners} processes running turns on one Redis (each Approve sent to both)`, results.twoProcessApprovals.threads],
      ],
    ),
    '',
    'Targets',
    table(
      ['target', 'measured', 'met'],
      results.targets.map((target) => [target.name, `${target.measured} ${target.unit}`, target.met ? 'yes' : 'NO']),
    ),
    '',
    `phases (s): ${Object.entries(results.phasesMs)
      .map(([name, ms]) => `${name} ${(ms / 1000).toFixed(1)}`)
      .join(', ')}`,
  ];
  return sections.join('\n');
}
