import type { CommandResult, SpawnCommandOptions } from './run-command.js';

/**
 * The messages between the bot process and its spawner process (`spawner-process.ts`), over the
 * IPC channel of `child_process.fork`: the only way in, so only the bot process can ask.
 */

/** One command to run: the bot process has already rendered the argv and worked out the environment. */
export interface SpawnerRunRequest extends Omit<SpawnCommandOptions, 'abortSignal' | 'onSpawn' | 'onGroupGone' | 'hold' | 'spawnHeld'> {
  type: 'run';
  id: number;
}

/** The command's turn was aborted (lease lost, fenced): stop it as `runCommand` would. */
export interface SpawnerAbortRequest {
  type: 'abort';
  id: number;
}

export type SpawnerRequest = SpawnerRunRequest | SpawnerAbortRequest;

export type SpawnerReply =
  /** The command started as process (and process group) `pid`. */
  | { type: 'spawned'; id: number; pid: number }
  | { type: 'result'; id: number; result: CommandResult }
  /** The request was malformed; never a failure of the command itself. */
  | { type: 'rejected'; id: number; error: string }
  /** `spawnCommand` threw (as `spawn` does for an argument with a NUL byte): the bot process throws the same. */
  | { type: 'threw'; id: number; error: { name: string; message: string; code?: string } };

/** Checks a request field by field; the spawner runs nothing it cannot read. Returns the problem, if any. */
export function requestProblem(message: unknown): string | undefined {
  if (typeof message !== 'object' || message === null) return 'a request must be an object';
  const request = message as Record<string, unknown>;
  if (!Number.isSafeInteger(request.id)) return 'id must be an integer';
  if (request.type === 'abort') return undefined;
  if (request.type !== 'run') return 'type must be run or abort';
  const { argv, workingDirectory, timeoutMs, outputLimit, environment, killGraceMs } = request;
  if (!Array.isArray(argv) || argv.length === 0 || !argv.every((part) => typeof part === 'string')) return 'argv must be a non-empty array of strings';
  if (workingDirectory !== undefined && typeof workingDirectory !== 'string') return 'workingDirectory must be a string';
  if (!isNonNegative(timeoutMs)) return 'timeoutMs must be a number of milliseconds';
  if (!isNonNegative(outputLimit)) return 'outputLimit must be a number of characters';
  if (killGraceMs !== undefined && !isNonNegative(killGraceMs)) return 'killGraceMs must be a number of milliseconds';
  if (typeof environment !== 'object' || environment === null || !Object.values(environment).every((value) => typeof value === 'string')) {
    return 'environment must map names to strings';
  }
  return undefined;
}

function isNonNegative(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}
