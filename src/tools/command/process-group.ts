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
