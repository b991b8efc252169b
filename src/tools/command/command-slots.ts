import { totalmem } from 'node:os';
import { createAdmissionGate, type AdmissionGate } from '../../runtime/admission-gate.js';
import { ABORTED_BEFORE_START, commandNotRun, type RunCommand } from './run-command.js';

/**
 * How many command tools a process runs at once. A turn waiting on the model costs the process little,
 * so a process runs hundreds of turns at once; the commands those turns start are processes of their
 * own (a CLI like kubectl holds 50–100 MB), which neither the event loop's delay nor the heap sees.
 * A burst of approvals must not start hundreds of them and run the machine out of memory, killing
 * every command in flight. So a command starts only while fewer than `maxRunning` run and the system
 * has `minAvailableMemoryBytes` available; the rest wait their turn, in order. One always may run.
 */
export type CommandSlots = AdmissionGate;

export interface CommandSlotsOptions {
  maxRunning: number;
  /** Below this much available memory (cgroup-aware), no further command starts while one runs; default `defaultMinAvailableMemory()`. */
  minAvailableMemoryBytes?: number;
  /** `process.availableMemory`, read at most every 100 ms, unless given. */
  availableMemory?: () => number;
}

export const DEFAULT_MAX_RUNNING_COMMANDS = 32;

/**
 * A tenth of the memory the process may use (the container's limit, else the machine's), at least
 * 64 MiB: what a few CLIs need, so the last commands started can still finish.
 */
export function defaultMinAvailableMemory({ machine = totalmem(), constrained = process.constrainedMemory() } = {}): number {
  // Node reports no limit as 0 or as a number past the machine's memory (the cgroup's "max").
  const limit = constrained > 0 && constrained < machine ? constrained : machine;
  return Math.max(64 * 1024 * 1024, Math.round(limit / 10));
}

export function createCommandSlots(options: CommandSlotsOptions): CommandSlots {
  const minAvailable = options.minAvailableMemoryBytes ?? defaultMinAvailableMemory();
  const availableMemory = options.availableMemory ?? recentAvailableMemory(100);
  // Memory freed elsewhere is seen at the next release: every end re-checks, and one always may run.
  return createAdmissionGate({ maxConcurrent: options.maxRunning, loaded: () => availableMemory() < minAvailable });
}

/**
 * `run` that waits for a slot first; a call aborted while it waits did not run, and says so like
 * `run` does. Once it has a slot, `beforeStart` decides whether it may still start: the wait can
 * be long, and a process stalled through it may have lost its thread before anything noticed.
 */
export function withCommandSlots(run: RunCommand, slots: CommandSlots): RunCommand {
  return async ({ beforeStart, ...options }) => {
    const waitingSince = performance.now();
    let release: () => void;
    try {
      release = await slots.acquire(options.abortSignal);
    } catch {
      return commandNotRun({ error: ABORTED_BEFORE_START, durationMs: performance.now() - waitingSince });
    }
    try {
      await beforeStart?.();
      return await run(options);
    } finally {
      release();
    }
  };
}

/** `process.availableMemory()` reads the cgroup's files (about 40 µs); a burst of starts shares one reading. */
function recentAvailableMemory(maxAgeMs: number): () => number {
  let value = 0;
  let readAt = Number.NEGATIVE_INFINITY;
  return () => {
    const now = performance.now();
    if (now - readAt > maxAgeMs) {
      value = process.availableMemory();
      readAt = now;
    }
    return value;
  };
}
