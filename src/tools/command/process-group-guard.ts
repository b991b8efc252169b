import type { Logger } from 'pino';
import { signalProcessGroup } from './process-group.js';
import { createProcessGroupWatchdog } from './process-group-watchdog.js';

/**
 * Keeps the process groups a bot process leads from outliving it: a stdio MCP server runs in a group
 * of its own (so stopping it stops what it started, a wrapper script's server too), which Ctrl-C in a
 * terminal no longer reaches. So, as for the direct runner's commands: `close` of their owner stops
 * them; a bot that exits without it (an uncaught exception, `process.exit`) kills the groups on its
 * way out; and the watchdog kills them if the bot is killed outright (SIGKILL, the OOM killer).
 */
export interface ProcessGroupGuard {
  /**
   * From now on, the group `pid` leads is killed if the bot process dies. Settles `true` once the
   * watchdog holds the group, `false` if none can (see `ProcessGroupWatchdog.watch`): then what is
   * held for it must not run. Never rejects.
   */
  watch(pid: number): Promise<boolean>;
  /** The group is gone (or stopped by its owner): nothing more to do for it. */
  unwatch(pid: number): void;
  /** Lets the watchdog go: it stops any group still watched and exits. */
  close(): void;
}

export interface CreateProcessGroupGuardOptions {
  logger?: Logger;
  /** Variables the config reads as secrets: the watchdog is not started with them. */
  withheldVariables?: readonly string[];
}

/** The watchdog is forked on the first `watch` only: a bot without such groups has none. */
export function createProcessGroupGuard({ logger, withheldVariables = [] }: CreateProcessGroupGuardOptions = {}): ProcessGroupGuard {
  const watched = new Set<number>();
  const watchdog = createProcessGroupWatchdog({ ...(logger && { logger }), withheldVariables });
  // Synchronous, as 'exit' listeners must be; only groups this guard watches are killed.
  const killWatched = () => {
    for (const pid of watched) signalProcessGroup(pid, 'SIGKILL');
  };
  return {
    watch(pid) {
      if (watched.size === 0) process.on('exit', killWatched);
      watched.add(pid);
      return watchdog.watch(pid);
    },
    unwatch(pid) {
      if (!watched.delete(pid)) return;
      watchdog.unwatch(pid);
      if (watched.size === 0) process.off('exit', killWatched);
    },
    close: () => watchdog.close(),
  };
}
