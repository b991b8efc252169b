import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { commandEnvironment, withholding } from './command-environment.js';
import { SPAWNER_EXEC_ARGV } from './spawner-client.js';

/**
 * Kills the process groups of running commands if the bot process dies, however it dies. A process
 * cannot run code after a SIGKILL, so a child does it: it outlives the bot by the moment it takes
 * to see its IPC channel close. The direct command runner's counterpart of the spawner's own rule.
 */
export interface ProcessGroupWatchdog {
  /**
   * Settles `true` once a watchdog confirmed it holds the group `pid` leads: one this forked answers
   * for the groups of its argv as soon as it runs (not at the fork: Node reports a fork that failed,
   * ENOENT, EAGAIN, EACCES, later, as an 'error'), one already running for the message telling it.
   * A watchdog that died, or did not answer within `confirmTimeoutMs` (it is killed), is replaced
   * once by a new one, with every group still watched in its argv. One that has not answered once
   * yet is still starting: every `watch` waits for it until `startTimeoutMs` after its fork, and it
   * is killed only then. `false` when none holds it even so (no watchdog could be forked, or it is
   * closed): what is held for it must not run. Never rejects.
   */
  watch(pid: number): Promise<boolean>;
  unwatch(pid: number): void;
  /** Lets the watchdog go: it stops any group still watched and exits. */
  close(): void;
  /** The watchdog's process id, when one is running (tests kill it). */
  watchdogPid(): number | undefined;
}

export interface CreateProcessGroupWatchdogOptions {
  logger?: Logger;
  /** Variables the config reads as secrets: the watchdog is not started with them. */
  withheldVariables?: readonly string[];
  /** How long `watch` waits for a running watchdog's word. Default `WATCH_CONFIRM_TIMEOUT_MS`. */
  confirmTimeoutMs?: number;
  /** How long `watch` waits for the word of a watchdog it just forked (Node has to start). Default `WATCHDOG_START_TIMEOUT_MS`. */
  startTimeoutMs?: number;
}

// Built: dist/tools/command/process-group-watchdog-process.js. From the sources (tests): the .ts file.
export const WATCHDOG_ENTRY = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? './process-group-watchdog-process.ts' : './process-group-watchdog-process.js', import.meta.url),
);

/** How long `watch` waits for the watchdog's word: a watchdog that cannot answer must not stall a start. */
const WATCH_CONFIRM_TIMEOUT_MS = 5_000;
/**
 * How long `watch` waits for a watchdog it just forked: a new Node process, which on a loaded host
 * takes well over a running one's answer; given up on, the command it holds is not started at all.
 */
const WATCHDOG_START_TIMEOUT_MS = 30_000;

type WatchdogMessage = { type: 'watch' | 'unwatch'; pid: number };

/** The group a message from the watchdog confirms it holds (`{ type: 'watching', pid }`), if it is one. */
function watchingPid(message: unknown): number | undefined {
  const { type, pid } = (typeof message === 'object' && message !== null ? message : {}) as { type?: unknown; pid?: unknown };
  return type === 'watching' && typeof pid === 'number' ? pid : undefined;
}

/**
 * Forks the watchdog on the first `watch`, and again after it died, with every group still watched
 * in its argv: a message sent after the fork is lost if the bot is killed before it went out, and a
 * watchdog that finds its channel closed knows no group then.
 */
export function createProcessGroupWatchdog({
  logger,
  withheldVariables = [],
  confirmTimeoutMs = WATCH_CONFIRM_TIMEOUT_MS,
  startTimeoutMs = WATCHDOG_START_TIMEOUT_MS,
}: CreateProcessGroupWatchdogOptions = {}): ProcessGroupWatchdog {
  const watched = new Set<number>();
  /** The groups the watchdog has not confirmed yet, with what settles their `watch` (held or not). */
  const unconfirmed = new Map<number, { confirmed: Promise<boolean>; settle: (held: boolean) => void }>();
  let child: ChildProcess | undefined;
  /**
   * While `child` has not answered once (Node still starts it): when its start allowance runs out
   * (`Date.now()` ms). A command arriving meanwhile waits for the rest of it, not `confirmTimeoutMs`:
   * otherwise, where Node takes longer than that to start, each such command killed the starting
   * watchdog and forked another, and none ever ran.
   */
  let startDeadline: number | undefined;
  let closed = false;
  /** Watchdogs that died (or never started) before they answered, since one last answered. */
  let unansweredInARow = 0;

  const send = (current: ChildProcess, message: WatchdogMessage) => {
    if (current.connected) current.send(message, undefined, undefined, () => {});
  };

  const confirmation = (pid: number, timeoutMs: number): Promise<boolean> => {
    const pending = unconfirmed.get(pid);
    if (pending) return pending.confirmed;
    let settle = (_held: boolean) => {};
    const confirmed = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        logger?.warn({ event: 'command-watchdog-slow', pid }, `the command watchdog did not confirm process group ${pid} within ${timeoutMs} ms; replacing it`);
        settle(false);
      }, timeoutMs);
      // Waiting for the watchdog must not keep the bot process alive either.
      timer.unref();
      settle = (held) => {
        clearTimeout(timer);
        unconfirmed.delete(pid);
        resolve(held);
      };
    });
    unconfirmed.set(pid, { confirmed, settle });
    return confirmed;
  };
  const settle = (pid: number, held: boolean) => unconfirmed.get(pid)?.settle(held);
  const settleAll = (held: boolean) => {
    for (const pid of [...unconfirmed.keys()]) settle(pid, held);
  };

  const start = (): ChildProcess | undefined => {
    let started: ChildProcess;
    try {
      started = fork(WATCHDOG_ENTRY, [...watched].map(String), {
        // The same lean, secret-free Node as the spawner: none of the bot's flags or secrets apply to it.
        env: commandEnvironment({ environment: withholding(withheldVariables, { NODE_OPTIONS: undefined }) }),
        execArgv: [...SPAWNER_EXEC_ARGV],
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      });
    } catch (error) {
      logger?.error({ event: 'command-watchdog-failed', err: error }, 'could not start the command watchdog; commands and stdio MCP servers are not started meanwhile');
      return undefined;
    }
    // It must never keep the bot process alive: it only matters once the bot is gone.
    started.unref();
    started.channel?.unref();
    let answered = false;
    started.on('message', (message: unknown) => {
      // A watchdog killed for answering late may still have its answer in the socket: it holds
      // nothing now, so that answer must not count as the confirmation of the one that replaced it.
      if (child !== started) return;
      const pid = watchingPid(message);
      if (pid === undefined) return;
      answered = true;
      startDeadline = undefined;
      unansweredInARow = 0;
      settle(pid, true);
    });
    const gone = (code: number | null, signal: NodeJS.Signals | null) => {
      if (child !== started) return;
      child = undefined;
      if (closed) return;
      if (!answered) unansweredInARow += 1;
      // The groups still running are watched by nothing now: a new watchdog takes them all (argv).
      // After one that never answered (it could not start, or died while it did), only once, so a
      // watchdog that cannot start is not forked in a loop; then the next `watch` forks one.
      if (watched.size > 0 && unansweredInARow <= 1) replace();
      // Nothing will confirm them now: each `watch` forks a new watchdog.
      else settleAll(false);
      logger?.error(
        { event: 'command-watchdog-died', pid: started.pid, code, signal },
        child === undefined ? 'the command watchdog died; the next command starts a new one' : 'the command watchdog died; a new one watches the process groups still running',
      );
    };
    started.on('error', (error) => {
      logger?.error({ event: 'command-watchdog-failed', err: error }, 'the command watchdog failed');
      // A fork that failed (no pid) is reported here, with no 'exit': it is gone as one that died.
      if (started.pid === undefined) gone(null, null);
    });
    started.once('exit', gone);
    return started;
  };

  /**
   * Forks a watchdog with every group watched in its argv: it confirms them all once it runs, those
   * still waiting for the watchdog before included. Not forked: none is held.
   */
  const replace = () => {
    child = start();
    startDeadline = Date.now() + startTimeoutMs;
    if (child === undefined) settleAll(false);
  };

  /** What is left of the current watchdog's start allowance: 0 once it answered, or it is spent. */
  const startAllowanceLeft = () => (child === undefined || startDeadline === undefined ? 0 : Math.max(0, startDeadline - Date.now()));

  /** Tells the watchdog `pid` (forking it if there is none). */
  const hold = (pid: number): { confirmed: Promise<boolean>; to: ChildProcess | undefined } => {
    const timeoutMs = child === undefined ? startTimeoutMs : startDeadline !== undefined ? startAllowanceLeft() : confirmTimeoutMs;
    const confirmed = confirmation(pid, timeoutMs);
    if (child === undefined) replace();
    else send(child, { type: 'watch', pid });
    return { confirmed, to: child };
  };

  return {
    async watch(pid) {
      watched.add(pid);
      if (closed) return false;
      const first = hold(pid);
      if (await first.confirmed) return true;
      if (closed || !watched.has(pid)) return false;
      // The watchdog it was sent to died, or did not answer: a stopped one is killed (not let go,
      // which would stop every group it holds), unless it is still within its start allowance (the
      // wait that ran out was one for the watchdog before it). One more try: with one forked since
      // (which has `pid` in its argv, or not yet answered), or a new one.
      if (child !== undefined && child === first.to && startAllowanceLeft() === 0) {
        child.kill('SIGKILL');
        child = undefined;
      }
      return hold(pid).confirmed;
    },
    unwatch(pid) {
      watched.delete(pid);
      settle(pid, false);
      if (child !== undefined) send(child, { type: 'unwatch', pid });
    },
    close() {
      closed = true;
      if (child?.connected) child.disconnect();
      child = undefined;
      settleAll(false);
    },
    watchdogPid: () => child?.pid,
  };
}
