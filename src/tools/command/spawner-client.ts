import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { CommandRunnerError, type CommandRunner } from './command-runner.js';
import { ABORTED_BEFORE_START, commandEnvironment, commandNotRun, signalProcessGroup, type CommandResult, type RunCommandOptions } from './run-command.js';
import { withholding } from './command-environment.js';
import type { SpawnerReply, SpawnerRunRequest } from './spawner-protocol.js';

export interface CreateSpawnerCommandRunnerOptions {
  logger?: Logger;
  /** How long `close` waits for the spawner to stop its commands and exit before killing it. */
  closeTimeoutMs?: number;
  /** Variables the config reads as secrets (`config-secrets.ts`): the spawner is not started with them either. */
  withheldVariables?: readonly string[];
}

interface PendingCall {
  executable: string;
  resolve(result: CommandResult): void;
  reject(error: Error): void;
  /** The command's process (group) once the spawner started it. */
  pid?: number;
}

interface Spawner {
  process: ChildProcess;
  calls: Map<number, PendingCall>;
  exited: Promise<void>;
}

const DEFAULT_CLOSE_TIMEOUT_MS = 3_000;
// Built: dist/tools/command/spawner-process.js. From the sources (tests): the .ts file, which Node
// runs with its types stripped.
export const SPAWNER_ENTRY = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? './spawner-process.ts' : './spawner-process.js', import.meta.url));
/**
 * Each fork copies the spawner's page tables and each exec tears the copy down, so the spawner's
 * CPU per command grows with the memory it has touched: a 1 MB young generation and no V8 helper
 * threads (it does too little to need them) take its anonymous memory from 33 to 21 MB and a `true`
 * from 1.57 to 1.31 ms of CPU, spawner and command together (1,500 spawns, 8 at once, Node 24, two
 * runs each). Nothing runs in the spawner that a helper thread would speed up.
 */
const LEAN_HEAP_ARGV = ['--max-semi-space-size=1', '--single-threaded'];
export const SPAWNER_EXEC_ARGV: readonly string[] = [...LEAN_HEAP_ARGV, ...(SPAWNER_ENTRY.endsWith('.ts') ? ['--disable-warning=ExperimentalWarning'] : [])];

/**
 * A `CommandRunner` whose commands are spawned by a long-lived child process, forked on the first
 * call. The bot process computes everything (argv, environment without its secrets) and sends it
 * over IPC; the spawner runs `spawnCommand`, the same code as the direct runner. If the spawner
 * dies, the calls in flight fail with a `CommandRunnerError` (their commands are killed) and the
 * next call forks a new one. If the bot process dies, the spawner sees its IPC channel close, stops
 * its commands and exits.
 */
export function createSpawnerCommandRunner({ logger, closeTimeoutMs = DEFAULT_CLOSE_TIMEOUT_MS, withheldVariables = [] }: CreateSpawnerCommandRunnerOptions = {}): CommandRunner & {
  /** The spawner's process id, when one is running (tests kill it). */
  spawnerPid(): number | undefined;
} {
  let spawner: Spawner | undefined;
  let nextId = 1;
  let closed = false;

  const start = (): Spawner => {
    const child = fork(SPAWNER_ENTRY, [], {
      serialization: 'advanced',
      // No secrets: every command gets the environment the bot process sends with it. A plain Node,
      // too: none of the bot's flags (NODE_OPTIONS, --inspect, a preload) apply to the spawner.
      env: commandEnvironment({ environment: withholding(withheldVariables, { NODE_OPTIONS: undefined }) }),
      execArgv: [...SPAWNER_EXEC_ARGV],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const calls = new Map<number, PendingCall>();
    const current: Spawner = {
      process: child,
      calls,
      exited: new Promise((resolve) => child.once('exit', () => resolve())),
    };
    child.on('message', (message: SpawnerReply) => {
      const call = calls.get(message.id);
      if (call === undefined) return;
      if (message.type === 'spawned') {
        call.pid = message.pid;
        return;
      }
      calls.delete(message.id);
      updateRef(current);
      if (message.type === 'result') call.resolve(message.result);
      else if (message.type === 'threw') call.reject(Object.assign(new Error(message.error.message), message.error));
      else call.reject(new CommandRunnerError({ executable: call.executable, reason: `the command spawner refused it: ${message.error}` }));
    });
    const onGone = (reason: string) => {
      if (spawner === current) spawner = undefined;
      if (!closed) logger?.error({ event: 'command-spawner-died', pid: child.pid, inFlight: calls.size }, `the command spawner ${reason}`);
      failCalls(current, `the command spawner ${reason}; the command was stopped`, { kill: true });
    };
    child.once('exit', (code, signal) => onGone(signal === null ? `exited with code ${code}` : `was killed by ${signal}`));
    child.once('error', (error) => {
      onGone(`failed: ${error.message}`);
      child.kill('SIGKILL');
    });
    logger?.info({ event: 'command-spawner-started', pid: child.pid }, 'command spawner started');
    return current;
  };

  const run = async (options: RunCommandOptions): Promise<CommandResult> => {
    // `beforeStart` is for the slots in front of this runner; a function cannot cross to the spawner.
    const { argv, environment, abortSignal, beforeStart: _beforeStart, ...rest } = options;
    const [executable] = argv;
    if (executable === undefined) throw new TypeError('runCommand: argv must not be empty');
    // Nothing is spawned: the call is not started, which the turn records as not run (see the command tool).
    if (closed) throw new CommandRunnerError({ executable, reason: 'the command runner is closed (the bot is stopping)', started: false });
    if (abortSignal?.aborted) return commandNotRun({ error: ABORTED_BEFORE_START, durationMs: 0 });
    // A spawner whose channel closed is on its way out (its exit handler fails its own calls).
    if (spawner !== undefined && !spawner.process.connected) spawner = undefined;
    spawner ??= start();
    const current = spawner;
    const id = nextId++;
    const request: SpawnerRunRequest = { type: 'run', id, argv, environment: commandEnvironment({ environment }), ...rest };
    return new Promise<CommandResult>((resolve, reject) => {
      const onAbort = () => current.process.connected && current.process.send({ type: 'abort', id }, undefined, undefined, () => {});
      const done = () => abortSignal?.removeEventListener('abort', onAbort);
      current.calls.set(id, {
        executable,
        resolve: (result) => {
          done();
          resolve(result);
        },
        reject: (error) => {
          done();
          reject(error);
        },
      });
      updateRef(current);
      abortSignal?.addEventListener('abort', onAbort, { once: true });
      current.process.send(request, undefined, undefined, (error) => {
        if (error === null) return;
        const call = current.calls.get(id);
        current.calls.delete(id);
        updateRef(current);
        call?.reject(new CommandRunnerError({ executable, reason: `could not reach the command spawner: ${error.message}` }));
      });
    });
  };

  return {
    run,
    spawnerPid: () => spawner?.process.pid,
    async close() {
      closed = true;
      const current = spawner;
      spawner = undefined;
      if (current === undefined) return;
      const pids = failCalls(current, 'the bot stopped while it ran; the command was stopped', { kill: false });
      // Closing the channel is the stop signal: the spawner stops its commands and exits.
      if (current.process.connected) current.process.disconnect();
      const timer = setTimeout(() => {
        current.process.kill('SIGKILL');
        for (const pid of pids) signalProcessGroup(pid, 'SIGKILL');
      }, closeTimeoutMs);
      await current.exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Fails every call in flight; with `kill`, also kills their process groups (a dead spawner cannot,
 * and no command may outlive it). Returns the commands' process ids.
 */
function failCalls(spawner: Spawner, reason: string, { kill }: { kill: boolean }): number[] {
  const pids: number[] = [];
  for (const call of spawner.calls.values()) {
    if (call.pid !== undefined) pids.push(call.pid);
    if (call.pid !== undefined && kill) signalProcessGroup(call.pid, 'SIGKILL');
    call.reject(new CommandRunnerError({ executable: call.executable, reason }));
  }
  spawner.calls.clear();
  return pids;
}

/** An idle spawner must not keep the bot process alive; one running commands must. */
function updateRef(spawner: Spawner): void {
  const busy = spawner.calls.size > 0;
  for (const handle of [spawner.process, spawner.process.channel]) {
    if (busy) handle?.ref();
    else handle?.unref();
  }
}
