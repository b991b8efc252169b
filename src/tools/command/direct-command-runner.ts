import type { Logger } from 'pino';
import { CommandRunnerError, type CommandRunner } from './command-runner.js';
import { commandEnvironment } from './command-environment.js';
import { createProcessGroupWatchdog } from './process-group-watchdog.js';
import { signalProcessGroup, spawnCommand, type CommandResult, type RunCommandOptions } from './run-command.js';

export interface CreateDirectCommandRunnerOptions {
  logger?: Logger;
  /** Variables the config reads as secrets: the watchdog is not started with them. */
  withheldVariables?: readonly string[];
  /** How long `close` lets the commands still running stop after SIGTERM before it kills them. */
  closeGraceMs?: number;
}

interface RunningCall {
  executable: string;
  controller: AbortController;
  /** The command's process (group) once it started. */
  pid?: number;
  /** Settles the call as failed without waiting for its command. */
  fail(error: Error): void;
  /**
   * Settles once nothing of the command is left running, whatever `fail` did: after its result,
   * what it left in its process group has ended or was stopped (`onGroupGone`).
   */
  finished: Promise<unknown>;
}

const DEFAULT_CLOSE_GRACE_MS = 1_000;

/**
 * A `CommandRunner` that spawns from the bot process itself. Each command leads a process group of
 * its own (so a timeout kills its children too), which also means it would outlive the bot. So no
 * command outlives it: `close` stops them; a bot that exits without closing (an uncaught exception,
 * `process.exit`) kills their groups on its way out; and a watchdog child kills them if the bot is
 * killed outright (SIGKILL, the OOM killer), which no code in the bot can see.
 */
export function createDirectCommandRunner({ logger, withheldVariables = [], closeGraceMs = DEFAULT_CLOSE_GRACE_MS }: CreateDirectCommandRunnerOptions = {}): CommandRunner & {
  /** The watchdog's process id, when one is running (tests kill it). */
  watchdogPid(): number | undefined;
} {
  const running = new Set<RunningCall>();
  const watchdog = createProcessGroupWatchdog({ ...(logger && { logger }), withheldVariables });
  let closed = false;

  // Synchronous, as 'exit' listeners must be; only process groups this runner started are killed.
  const killRunning = () => {
    for (const call of running) if (call.pid !== undefined) signalProcessGroup(call.pid, 'SIGKILL');
  };

  const run = async (options: RunCommandOptions): Promise<CommandResult> => {
    // `beforeStart` is for the slots in front of this runner (`withCommandSlots`).
    const { environment, abortSignal, beforeStart: _beforeStart, ...rest } = options;
    const [executable] = options.argv;
    if (executable === undefined) throw new TypeError('runCommand: argv must not be empty');
    // Nothing is spawned: the call is not started, which the turn records as not run (see the command tool).
    if (closed) throw new CommandRunnerError({ executable, reason: 'the command runner is closed (the bot is stopping)', started: false });
    const controller = new AbortController();
    if (running.size === 0) process.on('exit', killRunning);
    return new Promise<CommandResult>((resolve, reject) => {
      const call: RunningCall = { executable, controller, fail: reject, finished: Promise.resolve() };
      running.add(call);
      let groupGone = () => {};
      const gone = new Promise<void>((resolveGone) => {
        groupGone = resolveGone;
      });
      const result = spawnCommand({
        ...rest,
        environment: commandEnvironment({ environment }),
        abortSignal: abortSignal === undefined ? controller.signal : AbortSignal.any([abortSignal, controller.signal]),
        // Held until the watchdog holds its group: a bot killed before it could tell the watchdog
        // leaves no command running (the held process exits when the bot's end of its pipe
        // closes), and one killed after it leaves the watchdog to stop it. No watchdog: not run.
        hold: (pid) => {
          call.pid = pid;
          return watchdog.watch(pid);
        },
        onGroupGone: () => groupGone(),
      });
      result.then(resolve, reject);
      // Still watched (and stopped by `close` and on exit) after its result, while its group runs.
      call.finished = result
        .then(
          () => (call.pid === undefined ? undefined : gone),
          () => undefined,
        )
        .finally(() => {
          running.delete(call);
          if (call.pid !== undefined) watchdog.unwatch(call.pid);
          if (running.size === 0) process.off('exit', killRunning);
        });
    });
  };

  return {
    run,
    watchdogPid: watchdog.watchdogPid,
    async close() {
      closed = true;
      const calls = [...running];
      for (const call of calls) {
        call.fail(new CommandRunnerError({ executable: call.executable, reason: 'the bot stopped while it ran; the command was stopped' }));
        call.controller.abort();
      }
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise((resolve) => {
        timer = setTimeout(resolve, closeGraceMs);
      });
      await Promise.race([Promise.all(calls.map((call) => call.finished)), graceOver]);
      clearTimeout(timer);
      killRunning();
      watchdog.close();
    },
  };
}
