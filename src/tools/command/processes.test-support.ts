import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { expect, vi } from 'vitest';
import { HOLD_SCRIPT, HOLD_SCRIPT_SEARCHING, HOLD_SHELL } from './held-spawn.js';

// A killed orphan stays a zombie until PID 1 reaps it, and some container PID 1s never do.
export function isAlive(pid: number): boolean {
  if (process.platform === 'linux') {
    return existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A process leading a group of its own, as a command or a stdio MCP server does; its pid goes to `leftovers` (killed after the test). */
export function groupLeader(leftovers: number[]): number {
  const { pid } = spawn(process.execPath, ['-e', 'setInterval(() => {}, 60000)'], { detached: true, stdio: 'ignore' });
  if (pid === undefined) throw new Error('could not spawn');
  leftovers.push(pid);
  return pid;
}

/**
 * A command that starts a grandchild (in its process group), writes both process ids to `pidFile`
 * as JSON, and waits a minute: what a stuck tool looks like.
 */
export function hangingCommand(pidFile: string): string[] {
  const script = `const child = require('node:child_process').spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, JSON.stringify([process.pid, child.pid]));
setTimeout(() => {}, 60000);`;
  return [process.execPath, '-e', script];
}

/** The process ids `hangingCommand` wrote, once it has. */
export function readPids(pidFile: string): number[] | undefined {
  try {
    const pids = JSON.parse(readFileSync(pidFile, 'utf8')) as number[];
    return pids.length === 2 ? pids : undefined;
  } catch {
    return undefined;
  }
}

/** The process that started `pid`, from /proc (Linux only). */
export function parentOf(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1]);
}

/** The live processes in the group `pgid` leads, whoever started them (Linux only). */
export function processGroupMembers(pgid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((candidate) => {
      try {
        return Number(readFileSync(`/proc/${candidate}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[2]) === pgid && isAlive(candidate);
      } catch {
        return false; // Gone while we looked.
      }
    });
}

/** The live processes `pid` started (Linux only). */
export function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((candidate) => {
      try {
        return parentOf(candidate) === pid && isAlive(candidate);
      } catch {
        return false; // Gone while we looked.
      }
    });
}

/** Whether `pid` is a held child's stand-in (`spawnHeld`), which runs none of the command until let go (Linux only). */
export function isStandIn(pid: number): boolean {
  try {
    const [shell, flag, script] = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return shell === HOLD_SHELL && flag === '-c' && (script === HOLD_SCRIPT || script === HOLD_SCRIPT_SEARCHING);
  } catch {
    return false; // Gone.
  }
}

/**
 * A `hold` with no watchdog to hold the group: it answers `false` once the child is seen either held
 * (the stand-in, which runs nothing until let go) or running (it wrote `marker`).
 */
export const noWatchdog = (marker: string) => async (pid: number) => {
  const deadline = Date.now() + 10_000;
  while (!existsSync(marker) && !isStandIn(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  return false;
};

/** A `hold` whose watchdog holds the group at once; records whether the child was then held (the stand-in). */
export const watchdogHolds = (seen: boolean[]) => (pid: number) => {
  seen.push(isStandIn(pid));
  return Promise.resolve(true);
};

/** Writes `text` to `path` as a file anyone may run; answers `path`. */
export function executable(path: string, text: string | Buffer): string {
  writeFileSync(path, text);
  chmodSync(path, 0o755);
  return path;
}

/** `argv` as an argv template that runs it as is: templates read `{name}` as a placeholder, so braces are doubled. */
export function literalArgvTemplate(argv: string[]): string[] {
  return argv.map((element) => element.replaceAll('{', '{{').replaceAll('}', '}}'));
}

/**
 * Code for a stand-in bot (an ES module) that kills it the moment it forked a child (the process-group
 * watchdog): before the bot's next line runs, so before it could tell the watchdog anything over
 * IPC. What it spawned before (a command, a stdio MCP server: the leader of a process group) has its
 * pid written to `groupFile` by the bot, as the process itself may be stopped before it wrote its
 * own. `watchdogStartDelayMs`: the watchdog runs its own code only that long after it started, as on
 * a busy machine. The named imports of the modules under test follow the builtin's properties once
 * `syncBuiltinESMExports` ran.
 */
export const killedRightAfterFork = (groupFile: string, { watchdogStartDelayMs = 0 } = {}) => `const childProcess = (await import('node:child_process')).default;
const { syncBuiltinESMExports } = await import('node:module');
const { writeFileSync } = await import('node:fs');
const { fork, spawn } = childProcess;
childProcess.spawn = (...args) => {
  const child = spawn(...args);
  writeFileSync(${JSON.stringify(groupFile)}, String(child.pid));
  return child;
};
childProcess.fork = (modulePath, args, options) => {
  const delay = 'await new Promise((resolve) => setTimeout(resolve, ${watchdogStartDelayMs}))';
  const execArgv = ${watchdogStartDelayMs} > 0 ? [...options.execArgv, '--import=data:text/javascript,' + encodeURIComponent(delay)] : options.execArgv;
  const child = fork(modulePath, args, { ...options, execArgv });
  process.kill(process.pid, 'SIGKILL');
  return child;
};
syncBuiltinESMExports();`;

/**
 * Code for a stand-in bot (an ES module) that kills it the moment `spawn` returned the first child
 * it spawns (a command, a stdio MCP server): before the bot's next line runs, so before it could
 * tell its process-group watchdog about the child's group. The child's pid (its group) is written to
 * `groupFile` first. The watchdog's own `fork` is not `spawn`: it is not caught.
 */
export const killedRightAfterSpawn = (groupFile: string) => `const childProcess = (await import('node:child_process')).default;
const { syncBuiltinESMExports } = await import('node:module');
const { writeFileSync } = await import('node:fs');
const { spawn } = childProcess;
childProcess.spawn = (...args) => {
  const child = spawn(...args);
  writeFileSync(${JSON.stringify(groupFile)}, String(child.pid));
  process.kill(process.pid, 'SIGKILL');
  return child;
};
syncBuiltinESMExports();`;

/** How `child` ended, once it has. */
export const exited = (child: ChildProcess) => new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

/**
 * A stand-in `bot` running `killedRightAfterFork` or `killedRightAfterSpawn` dies of its SIGKILL,
 * and then nothing is left in the process group whose leader's pid it wrote to `groupFile`: what
 * the group still holds goes to `leftovers` (killed after the test).
 */
export async function expectGroupGoneAfterKill(bot: ChildProcess, groupFile: string, leftovers: number[]): Promise<void> {
  expect(await exited(bot)).toEqual({ code: null, signal: 'SIGKILL' });
  const group = Number(readFileSync(groupFile, 'utf8'));

  await vi.waitFor(
    () => {
      const members = processGroupMembers(group);
      leftovers.push(...members);
      expect(members).toEqual([]);
    },
    { timeout: 10_000, interval: 50 },
  );
}
