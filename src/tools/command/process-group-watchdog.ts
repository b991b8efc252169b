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
  watch(pid: number): void;
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
}

// Built: dist/tools/command/process-group-watchdog-process.js. From the sources (tests): the .ts file.
export const WATCHDOG_ENTRY = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? './process-group-watchdog-process.ts' : './process-group-watchdog-process.js', import.meta.url),
);

type WatchdogMessage = { type: 'watch' | 'unwatch'; pid: number };

/** Forks the watchdog on the first `watch`, and again after it died, telling the new one every group still watched. */
export function createProcessGroupWatchdog({ logger, withheldVariables = [] }: CreateProcessGroupWatchdogOptions = {}): ProcessGroupWatchdog {
  const watched = new Set<number>();
  let child: ChildProcess | undefined;
  let closed = false;

  const send = (current: ChildProcess, message: WatchdogMessage) => {
    if (current.connected) current.send(message, undefined, undefined, () => {});
  };

  const start = (): ChildProcess | undefined => {
    let started: ChildProcess;
    try {
      started = fork(WATCHDOG_ENTRY, [], {
        // The same lean, secret-free Node as the spawner: none of the bot's flags or secrets apply to it.
        env: commandEnvironment({ environment: withholding(withheldVariables, { NODE_OPTIONS: undefined }) }),
        execArgv: [...SPAWNER_EXEC_ARGV],
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      });
    } catch (error) {
      logger?.error({ event: 'command-watchdog-failed', err: error }, 'could not start the command watchdog; commands still run');
      return undefined;
    }
    // It must never keep the bot process alive: it only matters once the bot is gone.
    started.unref();
    started.channel?.unref();
    started.once('error', (error) => logger?.error({ event: 'command-watchdog-failed', err: error }, 'the command watchdog failed'));
    started.once('exit', (code, signal) => {
      if (child === started) child = undefined;
      if (!closed) logger?.error({ event: 'command-watchdog-died', pid: started.pid, code, signal }, 'the command watchdog died; the next command starts a new one');
    });
    for (const pid of watched) send(started, { type: 'watch', pid });
    return started;
  };

  return {
    watch(pid) {
      watched.add(pid);
      if (closed) return;
      if (child === undefined) child = start();
      else send(child, { type: 'watch', pid });
    },
    unwatch(pid) {
      watched.delete(pid);
      if (child !== undefined) send(child, { type: 'unwatch', pid });
    },
    close() {
      closed = true;
      if (child?.connected) child.disconnect();
      child = undefined;
    },
    watchdogPid: () => child?.pid,
  };
}
