import { CountersignError, ErrorCode, hasErrorCode } from '../../errors/countersign-error.js';
import type { RunCommand } from './run-command.js';

/**
 * Runs command tools. Two implementations with one behaviour: `direct` spawns from the bot process
 * itself (`direct-command-runner.ts`); `spawner` asks a small long-lived child process to spawn (see
 * `spawner-process.ts` for why).
 */
export interface CommandRunner {
  run: RunCommand;
  /** Stops what the runner started (the spawner process and any command still running). */
  close(): Promise<void>;
}

export type CommandRunnerKind = 'spawner' | 'direct';

/**
 * The command could not be run to the end because the runner itself failed (the spawner died), or
 * was not started at all because the runner is closed (`started: false`).
 */
export class CommandRunnerError extends CountersignError {
  override readonly name = 'CommandRunnerError';
  readonly code = ErrorCode.CommandRunnerFailed;
  /** The program the call was running, `argv[0]`. */
  readonly executable: string;
  /** False only when the runner refused the call before it spawned anything: the command did not run. */
  readonly started: boolean;

  constructor({ executable, reason, started = true }: { executable: string; reason: string; started?: boolean }) {
    super(started ? `${executable} did not finish: ${reason}` : `${executable} was not started: ${reason}`);
    this.executable = executable;
    this.started = started;
  }
}

/** A runner's refusal before it spawned anything (by code, so a duplicate copy of this module is recognised too). */
export function isCommandNotStarted(error: unknown): error is CommandRunnerError {
  return hasErrorCode(error, ErrorCode.CommandRunnerFailed) && (error as CommandRunnerError).started === false;
}
