import { readdirSync, readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import type { Logger } from 'pino';

/** Nice of the bot thread behind the Slack front unless COUNTERSIGN_TURN_THREAD_NICE says otherwise. */
export const DEFAULT_TURN_THREAD_NICE = 10;

export type ThreadPriorityOutcome = { lowered: true; threadId: number; nice: number } | { lowered: false; reason: string };

/**
 * Lowers the CPU priority of the calling thread only (Linux `setpriority` on its thread id), so that
 * on a busy machine the thread serving Slack is scheduled ahead of this one: an ack does not wait for
 * a core that turns are using. Processes this thread starts afterwards (the command spawner, stdio
 * MCP servers) inherit the priority. Raising a nice value needs no privilege; a failure is reported,
 * never thrown: the bot runs the same, only without the preference.
 */
export function lowerThreadPriority(options: {
  nice: number;
  /** The calling thread's kernel id; undefined where there is none to read (not Linux). */
  threadId?: () => number | undefined;
  setThreadPriority?: (threadId: number, nice: number) => void;
}): ThreadPriorityOutcome {
  const { nice, threadId = currentThreadId, setThreadPriority = setPriority } = options;
  if (nice === 0) return { lowered: false, reason: 'COUNTERSIGN_TURN_THREAD_NICE is 0' };
  const id = threadId();
  if (id === undefined) return { lowered: false, reason: 'thread priorities are set on Linux only' };
  try {
    setThreadPriority(id, nice);
    return { lowered: true, threadId: id, nice };
  } catch (error) {
    return { lowered: false, reason: `setpriority failed: ${(error as Error).message}` };
  }
}

/** `/proc/thread-self` links to `<pid>/task/<tid>`: the id `setpriority` takes for one thread. */
function currentThreadId(): number | undefined {
  try {
    const id = Number(readlinkSync('/proc/thread-self').split('/').at(-1));
    return Number.isSafeInteger(id) && id > 0 ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Lowers every thread of the process but the one serving Slack (the main thread, whose id is the
 * process id) to `nice`; the ids it lowered (none off Linux). Besides the bot thread, those are the
 * runtime's helpers, V8's (garbage collection, compiling) and libuv's pool: they start at the
 * process's priority before any thread is lowered, and most of their work is the turns' garbage.
 * They are told apart by id, not by name: Node 22 names them all `node`. A thread started later
 * takes the priority of the thread that starts it. In a worker process the main thread, which runs
 * the turns, was lowered by the caller.
 */
export function lowerThreadsBesideFront(options: {
  nice: number;
  frontThreadId?: number;
  threadIds?: () => number[];
  setThreadPriority?: (threadId: number, nice: number) => void;
}): number[] {
  const { nice, frontThreadId = process.pid, threadIds = processThreadIds, setThreadPriority = setPriority } = options;
  const lowered: number[] = [];
  for (const id of threadIds()) {
    if (id === frontThreadId) continue;
    try {
      setThreadPriority(id, nice);
      lowered.push(id);
    } catch {
      // A thread that ended meanwhile, or a refusal: it stays as it was.
    }
  }
  return lowered;
}

function processThreadIds(): number[] {
  try {
    return readdirSync('/proc/self/task').map(Number);
  } catch {
    return [];
  }
}

/**
 * Lowers the calling thread to the turn priority (`nice`, COUNTERSIGN_TURN_THREAD_NICE or 10) and
 * says which it runs at, for the thread that runs turns behind a Slack front and for a worker process.
 */
export function runTurnsBelowAcks(options: { nice: number | undefined; logger: Logger }): void {
  const priority = lowerThreadPriority({ nice: options.nice ?? DEFAULT_TURN_THREAD_NICE });
  if (priority.lowered) {
    const others = lowerThreadsBesideFront({ nice: priority.nice });
    options.logger.info({ event: 'turn-thread-priority', nice: priority.nice, threadId: priority.threadId, threadsLowered: others.length }, 'turns run below the acks in CPU priority');
  } else {
    options.logger.info({ event: 'turn-thread-priority', reason: priority.reason }, 'turns run at the acks\' CPU priority');
  }
}
