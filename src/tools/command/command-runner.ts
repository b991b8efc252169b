import { CountersignError, ErrorCode } from '../../errors/countersign-error.js';
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

/** The command could not be run to the end because the runner itself failed (the spawner died). */
export class CommandRunnerError extends CountersignError {
  override readonly name = 'CommandRunnerError';
  readonly code = ErrorCode.CommandRunnerFailed;
  /** The program the call was running, `argv[0]`. */
  readonly executable: string;

  constructor({ executable, reason }: { executable: string; reason: string }) {
    super(`${executable} did not finish: ${reason}`);
    this.executable = executable;
  }
}
