import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { createBoundedOutput } from './bounded-output.js';
import { commandEnvironment } from './command-environment.js';
import { notWatched, spawnHeld } from './held-spawn.js';
import { endLeftoverProcessGroup, signalProcessGroup, USE_PROCESS_GROUP } from './process-group.js';

export { commandEnvironment, isSecretVariableName } from './command-environment.js';
export { signalProcessGroup } from './process-group.js';

export interface RunCommandOptions {
  /** `argv[0]` is looked up on PATH; nothing is ever interpreted by a shell. */
  argv: string[];
  workingDirectory?: string;
  timeoutMs: number;
  /** Characters kept of stdout and, separately, of stderr. */
  outputLimit: number;
  /** Added to the inherited (secret-free) environment; see `commandEnvironment`. */
  environment?: Record<string, string | undefined>;
  abortSignal?: AbortSignal;
  /** Time between SIGTERM and SIGKILL. */
  killGraceMs?: number;
  /**
   * Awaited once a command that waited for a slot may start (`withCommandSlots`); a throw means it
   * does not start. The tool passes `ToolContext.assertHeld`: a process that stalled while it
   * waited must not spawn a command the thread's new holder already counts as interrupted.
   */
  beforeStart?: () => Promise<void>;
}

/** Runs a command; the direct runner and the spawner both resolve the same `CommandResult`s. */
export type RunCommand = (options: RunCommandOptions) => Promise<CommandResult>;

/** `RunCommandOptions` with the command's whole environment already worked out (`commandEnvironment`). */
export interface SpawnCommandOptions extends Omit<RunCommandOptions, 'environment'> {
  environment: Record<string, string>;
  /** Told the process id once the command started, e.g. so a supervisor can kill its group. */
  onSpawn?: (pid: number) => void;
  /**
   * Given, the command is spawned held (`spawnHeld`): told its process id, and its executable runs
   * only once this settled `true`, so that a supervisor holds its group before it can run anything
   * (a bot killed between the spawn and a plain `onSpawn` left it running unwatched). `false`: no
   * supervisor holds it, so the command is not started (`notWatched`). Must not reject. The
   * command's timeout starts when it is let go; one that passes first, or an abort, while it is
   * held stops it unrun (`timedOutBeforeStart`, `ABORTED_BEFORE_START`), as `false` does.
   */
  hold?: (pid: number) => Promise<boolean>;
  /**
   * Told once, after the result, when nothing of a command that started is left: what its process
   * left running in its group has ended, or was stopped at the command's timeout or an abort
   * (`endLeftoverProcessGroup`). Until then the group is the supervisor's to kill.
   */
  onGroupGone?: () => void;
  /**
   * How a held command is spawned: `spawnHeld` unless given. It spawns outright (`held: false`)
   * where it cannot hold (Windows; no `PATH` and an unknown C library): such a command runs from
   * the start, which the result must not deny.
   */
  spawnHeld?: typeof spawnHeld;
}

export interface CommandResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  durationMs: number;
  timedOut: boolean;
  /** Set when the command could not run or was cut short, e.g. `command not found: kubectl`. */
  error?: string;
  /**
   * Set only when none of the command's code can have run: nothing was spawned (`commandNotRun`), or
   * its held stand-in was stopped before it was let go (a timeout or an abort while held, no
   * watchdog). The command tool then refuses the call as not started, so the turn records it as not
   * run. Never set for a command that may have started, even if it failed at once.
   */
  neverRan?: true;
}

/** Long enough for a well-behaved program to clean up, short enough to keep a Slack turn moving. */
export const DEFAULT_KILL_GRACE_MS = 5_000;
/**
 * After the process exits, how long to wait for its pipes to close. A background grandchild that
 * inherited stdout keeps them open indefinitely; the result should not wait for it.
 */
const PIPE_DRAIN_AFTER_EXIT_MS = 1_000;

/**
 * Runs a command without a shell and resolves with what happened; it does not throw for failures
 * of the command itself (not found, non-zero exit, timeout, abort), because those are results the
 * model should see and react to.
 */
export async function runCommand(options: RunCommandOptions): Promise<CommandResult> {
  const { environment, ...rest } = options;
  return spawnCommand({ ...rest, environment: commandEnvironment({ environment }) });
}

/**
 * `runCommand` with the environment given whole: what the spawner process runs, with the
 * environment the bot process computed (the spawner itself holds no secrets to filter).
 */
export async function spawnCommand(options: SpawnCommandOptions): Promise<CommandResult> {
  const { argv, workingDirectory, timeoutMs, outputLimit, environment, abortSignal, onSpawn, hold, onGroupGone } = options;
  const spawnHeldCommand = options.spawnHeld ?? spawnHeld;
  const killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const [executable, ...args] = argv;
  if (executable === undefined) throw new TypeError('runCommand: argv must not be empty');

  const startedAt = performance.now();
  const stdout = createBoundedOutput(outputLimit);
  const stderr = createBoundedOutput(outputLimit);
  const failed = (error: string): CommandResult => commandNotRun({ error, durationMs: performance.now() - startedAt });

  if (abortSignal?.aborted) return failed(ABORTED_BEFORE_START);
  // spawn reports a missing cwd as ENOENT, indistinguishable from a missing executable.
  if (workingDirectory !== undefined && !(await isDirectory(workingDirectory))) {
    return failed(`working directory not found: ${workingDirectory}`);
  }
  // The check above awaited: an abort meanwhile has no listener to hear it yet.
  if (abortSignal?.aborted) return failed(ABORTED_BEFORE_START);

  return new Promise<CommandResult>((resolve) => {
    const spawnOptions = {
      cwd: workingDirectory,
      env: environment,
      stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'],
      // A process group lets a timeout kill a script's children too, not just the script.
      detached: USE_PROCESS_GROUP,
      windowsHide: true,
    };
    const { child, release, held } = hold
      ? spawnHeldCommand(executable, args, spawnOptions)
      : { child: spawn(executable, args, { ...spawnOptions, shell: false }), release: () => {}, held: false };
    /** Whether the command may be running: false while the held stand-in waits to be let go. */
    let started = !held;
    /** When the command's timeout clock started: at its start, so a hold does not use up its time. */
    let clockStartedAt = performance.now();
    let timedOut = false;
    let stopReason: string | undefined;
    /** The held stand-in was killed before it became the command: its exit is not the command's. */
    let neverRan = false;
    let exit: { code: number | null; signal: string | null } | undefined;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    let timeoutTimer: NodeJS.Timeout | undefined;

    const sendSignal = (signal: NodeJS.Signals) => {
      if (child.pid !== undefined) signalProcessGroup(child.pid, signal);
    };
    /** `beforeStart` is the reason if the command is still held: then it never ran, and has nothing to clean up. */
    const stop = ({ reason, beforeStart }: { reason: string; beforeStart: string }) => {
      if (stopReason !== undefined || exit !== undefined || settled) return;
      if (!started) {
        stopReason = beforeStart;
        neverRan = true;
        sendSignal('SIGKILL');
        return;
      }
      stopReason = reason;
      sendSignal('SIGTERM');
      timers.push(setTimeout(() => sendSignal('SIGKILL'), killGraceMs));
    };
    const startClock = () => {
      clearTimeout(timeoutTimer);
      clockStartedAt = performance.now();
      timeoutTimer = setTimeout(() => {
        if (exit !== undefined) return;
        timedOut = true;
        stop({ reason: `timed out after ${timeoutMs} ms`, beforeStart: timedOutBeforeStart(timeoutMs) });
      }, timeoutMs);
    };
    const settle = (error?: string) => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      clearTimeout(timeoutTimer);
      abortSignal?.removeEventListener('abort', onAbort);
      child.stdout?.destroy();
      child.stderr?.destroy();
      const out = stdout.finish();
      const err = stderr.finish();
      const message = error ?? stopReason;
      resolve({
        exitCode: neverRan ? null : (exit?.code ?? null),
        signal: neverRan ? null : (exit?.signal ?? null),
        stdout: out.text,
        stderr: err.text,
        stdoutTruncated: out.truncated,
        stderrTruncated: err.truncated,
        durationMs: Math.round(performance.now() - startedAt),
        timedOut,
        ...(message !== undefined && { error: message }),
        ...(neverRan && { neverRan: true as const }),
      });
      // The result is in, but a process the command left in its group may still run: it gets the
      // rest of the command's time, as it would have had the command waited for it.
      const pid = child.pid;
      if (pid !== undefined) {
        endLeftoverProcessGroup({ pid, remainingMs: timeoutMs - (performance.now() - clockStartedAt), graceMs: killGraceMs, ...(abortSignal && { abortSignal }), onGone: () => onGroupGone?.() });
      }
    };
    const onAbort = () => stop({ reason: 'aborted', beforeStart: ABORTED_BEFORE_START });
    if (child.pid !== undefined) {
      onSpawn?.(child.pid);
      // Stopped (timed out, aborted) while held: the group is being signalled, nothing to let run.
      if (hold) {
        void hold(child.pid).then((watched) => {
          if (stopReason !== undefined || exit !== undefined) return;
          if (!watched) {
            // Never run unwatched: a bot killed then would leave it running for good.
            stopReason = notWatched(executable);
            // Spawned outright (it could not be held), it has run since the spawn: stopped, not unrun.
            neverRan = !started;
            sendSignal('SIGKILL');
            return;
          }
          // Spawned outright (it could not be held): it runs already, on the clock it started with.
          if (started) return;
          release();
          started = true;
          startClock();
        });
      }
    }

    child.stdout?.on('data', (chunk: Buffer) => stdout.write(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.write(chunk));
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') settle(`command not found: ${executable}`);
      else if (error.code === 'EACCES') settle(`permission denied: ${executable}`);
      else settle(`could not run ${executable}: ${error.message}`);
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // Once we have decided to stop, stragglers in the process group go too, without a grace.
      if (stopReason !== undefined) sendSignal('SIGKILL');
      timers.push(setTimeout(() => settle(), PIPE_DRAIN_AFTER_EXIT_MS));
    });
    child.on('close', () => settle());

    // A held command's clock starts again when it is let go; until then this bounds its wait.
    startClock();
    abortSignal?.addEventListener('abort', onAbort, { once: true });
  });
}

export const ABORTED_BEFORE_START = 'aborted before start';

/** Why a held command whose timeout passed before the process-group watchdog held its group did not run. */
export function timedOutBeforeStart(timeoutMs: number): string {
  return `timed out after ${timeoutMs} ms before it could start: the process-group watchdog did not confirm in time that it watches the command, so it was not started`;
}

/** The result of a command that was never spawned (aborted before its start, no working directory): no output, only `error`. */
export function commandNotRun({ error, durationMs }: { error: string; durationMs: number }): CommandResult {
  return {
    exitCode: null,
    signal: null,
    stdout: '',
    stderr: '',
    stdoutTruncated: false,
    stderrTruncated: false,
    durationMs: Math.round(durationMs),
    timedOut: false,
    error,
    neverRan: true,
  };
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}
