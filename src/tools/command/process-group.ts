/**
 * The process group a child leads when it is spawned `detached` (not on Windows): a command, a stdio
 * MCP server. Signalling the group reaches what the child started too (a script's children, the
 * server a wrapper script runs), which signalling the child alone would leave running.
 */
export const USE_PROCESS_GROUP = process.platform !== 'win32';

/** How often a group being stopped is looked at, so that its end is seen before the grace is over. */
const GROUP_CHECK_MS = 100;

/** Signals the process group `pid` leads (the process alone on Windows); quiet if it is gone. */
export function signalProcessGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(USE_PROCESS_GROUP ? -pid : pid, signal);
  } catch {
    // Already gone.
  }
}

/** Whether any process is left in the group `pid` leads (a zombie too). Always false on Windows, which has no such groups. */
export function processGroupExists(pid: number): boolean {
  if (!USE_PROCESS_GROUP) return false;
  try {
    process.kill(-pid, 0);
    return true;
  } catch (error) {
    // EPERM: a process is there, one we may not signal.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Stops what is left of the group `pid` leads: SIGTERM, then SIGKILL to whatever is still there
 * after `graceMs`. `onGone` is told once, when the group is empty or has been sent SIGKILL.
 */
export function endProcessGroup({ pid, graceMs, onGone }: { pid: number; graceMs: number; onGone?: () => void }): void {
  if (!processGroupExists(pid)) {
    onGone?.();
    return;
  }
  signalProcessGroup(pid, 'SIGTERM');
  const killAt = Date.now() + graceMs;
  const check = setInterval(() => {
    if (processGroupExists(pid)) {
      if (Date.now() < killAt) return;
      signalProcessGroup(pid, 'SIGKILL');
    }
    clearInterval(check);
    onGone?.();
  }, GROUP_CHECK_MS);
}

/** How often a group whose leader exited is looked at, to let it go once it is empty. */
const LEFTOVER_CHECK_MS = 500;

export interface EndLeftoverProcessGroupOptions {
  /** The group's leader, which has exited (or whose result is in). */
  pid: number;
  /** What is left of the command's time: then the group is stopped. */
  remainingMs: number;
  /** Between SIGTERM and SIGKILL. */
  graceMs: number;
  /** Stops the group at once (the bot stops, the turn lost its lease). */
  abortSignal?: AbortSignal;
  /** Told once, when the group is empty or has been stopped. */
  onGone: () => void;
}

/**
 * What a command leaves running in its group when it exits (a script's `helper &`, a CLI's
 * background refresher) may finish within the command's time, not after it: at its timeout, or at
 * an abort, the group is stopped like the command would have been (`endProcessGroup`). The timers
 * hold no reference on the process: a bot that exits kills the groups it still knows (its runners).
 */
export function endLeftoverProcessGroup({ pid, remainingMs, graceMs, abortSignal, onGone }: EndLeftoverProcessGroupOptions): void {
  if (!processGroupExists(pid)) {
    onGone();
    return;
  }
  let ending = false;
  const end = () => {
    if (ending) return;
    ending = true;
    clearInterval(check);
    clearTimeout(deadline);
    abortSignal?.removeEventListener('abort', end);
    endProcessGroup({ pid, graceMs, onGone });
  };
  // An empty group is let go at once; its number may soon lead another process's group.
  const check = setInterval(() => {
    if (!processGroupExists(pid)) end();
  }, LEFTOVER_CHECK_MS);
  const deadline = setTimeout(end, Math.max(0, remainingMs));
  check.unref();
  deadline.unref();
  if (abortSignal?.aborted) end();
  else abortSignal?.addEventListener('abort', end, { once: true });
}
