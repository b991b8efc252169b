import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Bots run as real processes, started the way the README says (or from an isolated build). */
export const repositoryRoot = join(import.meta.dirname, '../..');

export interface ChildBot {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** A process's or thread's nice value (`/proc/<pid>/stat` or `/proc/<pid>/task/<tid>/stat`): field 19. */
export function niceOf(statPath: string): number {
  const stat = readFileSync(statPath, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

/** The nice of each of a process's threads but its main one (whose id is the process id); one that ended meanwhile is left out. */
export function nicesOfThreadsBesideMain(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`)
    .filter((tid) => Number(tid) !== pid)
    .flatMap((tid) => {
      try {
        return [niceOf(`/proc/${pid}/task/${tid}/stat`)];
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw error;
      }
    });
}

/** The processes a process started, whichever of its threads started them. */
export function childrenOf(pid: number): string[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) => readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean));
}

export { freePort } from '../helpers/free-port.js';

/** The last isolated build this worker made, and the state of the sources it was made from. */
let isolatedBuild: { sources: string; mainJs: string } | undefined;

/**
 * Compiles the bot into a directory of its own, so tests that run several bot processes do not
 * race other tests rebuilding `dist/`. A worker's test files share one module graph (vitest's
 * `isolate: false`), so the build is made once per worker and reused while the sources are
 * unchanged: a whole tsc run (seconds of CPU) per file added nothing. The workers of a run share it
 * too (`sharedIsolatedBuild`).
 */
export function buildIsolatedBot(): string {
  const sources = sourcesState();
  if (isolatedBuild?.sources === sources && existsSync(isolatedBuild.mainJs)) return isolatedBuild.mainJs;
  const mainJs = sharedIsolatedBuild(sources);
  isolatedBuild = { sources, mainJs };
  return mainJs;
}

/** How long a worker waits for the build another worker of the run is making before it makes its own. */
const SHARED_BUILD_WAIT_MS = 180_000;

/**
 * One build per state of the sources for the whole run, in the run's own temporary directory (the
 * TMPDIR global-setup.ts gives every worker): the first worker to need it takes a lock directory
 * and builds; the others wait for it rather than run a second tsc beside it (about 5 s of CPU each
 * on the 2 cores). The build appears whole (renamed into place once compiled). A lock given up
 * (its build failed) or held past the wait (its worker died) is built past, in a directory of its own.
 */
function sharedIsolatedBuild(sources: string): string {
  const directory = join(tmpdir(), `countersign-build-${createHash('sha256').update(`${repositoryRoot}\n${sources}`).digest('hex').slice(0, 16)}`);
  const mainJs = join(directory, 'dist/main.js');
  const lock = `${directory}.lock`;
  if (existsSync(mainJs)) return mainJs;
  try {
    mkdirSync(lock);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const deadline = Date.now() + SHARED_BUILD_WAIT_MS;
    // Synchronous, like the build it stands in for: the callers are test set-up with nothing else to do.
    while (!existsSync(mainJs) && existsSync(lock) && Date.now() < deadline) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    return existsSync(mainJs) ? mainJs : compileIsolatedBot(mkdtempSync(join(tmpdir(), 'countersign-build-')));
  }
  try {
    const building = mkdtempSync(`${directory}.building-`);
    compileIsolatedBot(building);
    renameSync(building, directory);
    return mainJs;
  } catch (error) {
    rmSync(lock, { recursive: true, force: true });
    throw error;
  }
}

/** How many files src/ and the build settings hold and when the newest was written: a change to any of them makes a new build. */
function sourcesState(): string {
  const files = [
    ...readdirSync(join(repositoryRoot, 'src'), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath, entry.name)),
    ...['package.json', 'tsconfig.json', 'tsconfig.build.json'].map((file) => join(repositoryRoot, file)),
  ];
  return `${files.length}:${Math.max(...files.map((file) => statSync(file).mtimeMs))}`;
}

/** Builds the bot into `directory` (its dist/, package.json and a link to node_modules); returns its main.js. */
function compileIsolatedBot(directory: string): string {
  // Type errors are the typecheck step's business (`npm test` runs it first); tsc still emits.
  spawnSync(process.execPath, [join(repositoryRoot, 'node_modules/typescript/bin/tsc'), '-p', join(repositoryRoot, 'tsconfig.build.json'), '--outDir', join(directory, 'dist')], {
    stdio: 'pipe',
  });
  if (!existsSync(join(directory, 'dist/main.js'))) throw new Error('building the bot produced no dist/main.js');
  copyFileSync(join(repositoryRoot, 'package.json'), join(directory, 'package.json'));
  symlinkSync(join(repositoryRoot, 'node_modules'), join(directory, 'node_modules'), 'dir');
  return join(directory, 'dist/main.js');
}

let checkout: string | undefined;

/**
 * A copy of the repository to run `npm start` in (its sources and build settings; node_modules
 * linked), made once per test file. Its prestart build writes dist/ there: in the repository itself
 * another test run, or a developer's build, may be rewriting dist/ at the same moment, and the bot
 * would load a half-written mix of modules.
 */
export function repositoryCheckout(): string {
  if (checkout !== undefined) return checkout;
  const directory = mkdtempSync(join(tmpdir(), 'countersign-checkout-'));
  for (const file of ['package.json', 'tsconfig.json', 'tsconfig.build.json']) copyFileSync(join(repositoryRoot, file), join(directory, file));
  cpSync(join(repositoryRoot, 'src'), join(directory, 'src'), { recursive: true });
  symlinkSync(join(repositoryRoot, 'node_modules'), join(directory, 'node_modules'), 'dir');
  checkout = directory;
  return directory;
}

/** `npm start` in a checkout of the repository (the README's way), or `node <mainJs>` for an isolated build. */
export function startChildBot(environment: Record<string, string>, options: { mainJs?: string } = {}): ChildBot {
  let output = '';
  // Only what the README lists, plus PATH/HOME so npm and node can run.
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...environment };
  const child = options.mainJs
    ? spawn(process.execPath, [...faultPreload(environment), options.mainJs], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn('npm', ['start', '--silent'], { cwd: repositoryCheckout(), env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** How long a bot gets to stop on SIGTERM before its process group is killed. */
const STOP_GRACE_MS = 20_000;

/**
 * SIGTERM to the bot's process group, then SIGKILL to whatever of the group is left once the bot
 * has exited or the grace has run out: a bot that cannot stop (the bug a test is about, a busy loop
 * that never reaches its signal handler) must not outlive the test, spinning on a shared machine.
 */
export async function stopChildBot(bot: ChildBot): Promise<unknown> {
  const group = bot.child.pid;
  if (group === undefined) return bot.exited;
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-group, signal);
    } catch {
      // Already gone.
    }
  };
  if (bot.child.exitCode === null && bot.child.signalCode === null) signalGroup('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([bot.exited, new Promise((resolve) => (timer = setTimeout(resolve, STOP_GRACE_MS)))]);
  clearTimeout(timer);
  signalGroup('SIGKILL');
  return bot.exited;
}

/** Resolves when the bot has logged that it serves HTTP (its `countersign listening` line). */
export async function waitUntilListening(bot: ChildBot, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!bot.output().includes('countersign listening')) {
    if (bot.child.exitCode !== null || bot.child.signalCode !== null) throw new Error(`bot exited before listening:\n${bot.output()}`);
    if (Date.now() > deadline) throw new Error(`bot not listening after ${timeoutMs} ms:\n${bot.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The crash and stall tests' fault hook, preloaded only when they ask for a fault point. */
function faultPreload(environment: Record<string, string>): string[] {
  if (!['COUNTERSIGN_CRASH_AT', 'COUNTERSIGN_STALL_AT', 'COUNTERSIGN_THROW_AT', 'COUNTERSIGN_END_THREAD_AT'].some((name) => environment[name])) return [];
  return ['--import', pathToFileURL(join(import.meta.dirname, 'fault-preload.mjs')).href];
}
