import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The repository root (bench/lib/ → ../..). */
export const REPOSITORY_ROOT = join(import.meta.dirname, '../..');
const OUTPUT_TAIL = 4_000;
/** `getconf CLK_TCK`; 100 on every Linux this runs on. */
const CLOCK_TICKS_PER_SECOND = 100;

export { freePort } from '../../test/helpers/free-port.js';

export interface ChildHandle {
  name: string;
  pid: number;
  port: number;
  url: string;
  child: ChildProcess;
  /** The last few KB the process wrote (stdout and stderr). */
  output(): string;
  /** What it wrote before it answered /healthz (the inspector URL, start-up warnings): the first and last few KB. */
  startupOutput: string;
  stop(): Promise<void>;
}

/**
 * Spawns `node <args>` directly (not through npm) so the pid is the server's own and /proc numbers
 * are its alone, then waits until GET /healthz answers 200.
 */
export async function startNodeServer(options: { name: string; args: string[]; env: Record<string, string>; port: number; timeoutMs?: number }): Promise<ChildHandle> {
  const child = spawn(process.execPath, options.args, {
    cwd: REPOSITORY_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  // The first lines too (the inspector's URL): with --trace-gc they soon leave the tail.
  let head = '';
  let written = 0;
  const collect = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    if (head.length < OUTPUT_TAIL) head += text.slice(0, OUTPUT_TAIL - head.length);
    written += text.length;
    output = (output + text).slice(-OUTPUT_TAIL);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  // BENCH_OUTPUT_DIRECTORY=<dir>: each server's whole output also goes to <dir>/<name>.log (e.g. with --trace-gc).
  const outputDirectory = process.env.BENCH_OUTPUT_DIRECTORY;
  if (outputDirectory) {
    const file = createWriteStream(join(outputDirectory, `${options.name}.log`));
    child.stdout?.pipe(file, { end: false });
    child.stderr?.pipe(file, { end: false });
  }
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => process.off('exit', killOnExit));
  const url = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${options.name} exited during start-up:\n${output}`);
    const healthy = await fetch(`${url}/healthz`).then(
      (response) => response.ok,
      () => false,
    );
    if (healthy) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${options.name} did not answer /healthz in time:\n${output}`);
    }
    await sleep(50);
  }
  return {
    name: options.name,
    pid: child.pid as number,
    port: options.port,
    url,
    child,
    output: () => output,
    startupOutput: written <= OUTPUT_TAIL ? output : `${head}\n…\n${output}`,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Resident set size of a process in bytes, from /proc/<pid>/status (VmRSS, reported in kB). */
export function rssBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) * 1024;
}

/** User + system CPU time of a process in milliseconds, from /proc/<pid>/stat (utime, stime). */
export function cpuMs(pid: number, options: { children?: boolean } = {}): number {
  return statCpuMs(`/proc/${pid}/stat`, options.children ?? false);
}

/**
 * CPU a process's live threads have used, in ms to the microsecond: the scheduler's own total per
 * thread (`se.sum_exec_runtime` in /proc/<pid>/task/<tid>/sched). /proc's stat counts 10 ms ticks,
 * too coarse for one resumed turn; where `sched` is missing this falls back to them.
 */
export function preciseCpuMs(pid: number): number {
  let total = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const match = /^se\.sum_exec_runtime\s*:\s*([\d.]+)/m.exec(readFileSync(`/proc/${pid}/task/${tid}/sched`, 'utf8'));
      if (!match) return cpuMs(pid);
      total += Number(match[1]);
    } catch {
      // Ended between the listing and the read.
    }
  }
  return total;
}

/** CPU each thread of a process has used, in ms, by thread id (a thread that ends meanwhile is left out). */
export function threadCpuMs(pid: number): Map<number, number> {
  const byThread = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      byThread.set(Number(tid), statCpuMs(`/proc/${pid}/task/${tid}/stat`, false));
    } catch {
      // Ended between the listing and the read.
    }
  }
  return byThread;
}

/** The processes a process has started and not yet reaped. */
export function childPids(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) => readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
}

/** utime + stime of a /proc stat line, and with `children` the cutime + cstime of its reaped children. */
function statCpuMs(path: string, children: boolean): number {
  const stat = readFileSync(path, 'utf8');
  // The command name (field 2) is parenthesised and may hold spaces: count fields after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name, fields start at 3 (state); utime, stime, cutime, cstime are fields 14 to 17.
  const ticks = (field: number) => Number(fields[field - 3]);
  const total = ticks(14) + ticks(15) + (children ? ticks(16) + ticks(17) : 0);
  return (total * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** `waitForCpuIdle`'s window unless one is given: the full benchmark's (`BenchScale.idleWindowMs`). */
export const IDLE_WINDOW_MS = 300;

/**
 * Waits until the process has used (almost) no CPU for `windowMs`: its queued work is done. Given
 * several (a receiver and its worker), until all of them were idle in the same window: one going
 * idle while another still works may be handed more.
 */
export async function waitForCpuIdle(pids: number | readonly number[], options: { windowMs?: number; timeoutMs?: number; toleranceMs?: number } = {}): Promise<void> {
  const all = typeof pids === 'number' ? [pids] : pids;
  const windowMs = options.windowMs ?? IDLE_WINDOW_MS;
  const tolerance = options.toleranceMs ?? 10;
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  let before = all.map((pid) => cpuMs(pid));
  for (;;) {
    await sleep(windowMs);
    const after = all.map((pid) => cpuMs(pid));
    if (after.every((ms, index) => ms - (before[index] ?? 0) <= tolerance)) return;
    if (Date.now() > deadline) throw new Error(`pid ${all.join(', ')} still busy after ${options.timeoutMs ?? 120_000} ms`);
    before = after;
  }
}

/** RSS after a short idle: the median of several samples, so one allocation burst does not decide it. */
export async function settledRss(pid: number, options: { idleMs?: number; samples?: number; intervalMs?: number; idleWindowMs?: number } = {}): Promise<number> {
  await waitForCpuIdle(pid, options.idleWindowMs === undefined ? {} : { windowMs: options.idleWindowMs });
  await sleep(options.idleMs ?? 1_000);
  const samples: number[] = [];
  for (let index = 0; index < (options.samples ?? 5); index += 1) {
    if (index > 0) await sleep(options.intervalMs ?? 200);
    samples.push(rssBytes(pid));
  }
  samples.sort((left, right) => left - right);
  return samples[Math.floor(samples.length / 2)] as number;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface LoadResult {
  latenciesMs: number[];
  /** When each request was sent, in ms after the first. */
  sentAtMs: number[];
  statuses: number[];
  /** Epoch ms when the first request was sent. */
  startedAt: number;
  wallMs: number;
}

export interface LoadGenerator {
  pid: number;
  /** Closed loop with `concurrency` lanes, or open loop at `ratePerSecond` (then `concurrency` caps what is in flight). */
  run(options: { url: string; signingSecret: string; concurrency: number; ratePerSecond?: number; requests: Array<{ contentType: string; body: string }> }): Promise<LoadResult>;
  stop(): Promise<void>;
}

/** The closed-loop HTTP client (bench/load-generator.ts) in its own process, driven over IPC. */
export function startLoadGenerator(): LoadGenerator {
  const child = spawn(process.execPath, [join(REPOSITORY_ROOT, 'bench/load-generator.ts')], {
    cwd: REPOSITORY_ROOT,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => process.off('exit', killOnExit));
  let nextId = 0;
  const waiting = new Map<number, { resolve: (result: LoadResult) => void; reject: (error: Error) => void }>();
  child.on('message', (message: { type: string; id: number } & LoadResult) => {
    if (message.type !== 'result') return;
    waiting.get(message.id)?.resolve(message);
    waiting.delete(message.id);
  });
  void exited.then(() => {
    for (const { reject } of waiting.values()) reject(new Error('load generator exited'));
    waiting.clear();
  });
  return {
    pid: child.pid as number,
    run(options) {
      nextId += 1;
      const id = nextId;
      return new Promise<LoadResult>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        child.send({ type: 'run', id, ...options });
      });
    },
    async stop() {
      if (child.exitCode !== null) return;
      child.disconnect();
      await exited;
    },
  };
}
