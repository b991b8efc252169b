/**
 * Test-only fault injection, for the end-to-end tests that run several bot processes on one Redis.
 * `COUNTERSIGN_CRASH_AT=<name>` kills the process with SIGKILL when it reaches the named point;
 * `COUNTERSIGN_STALL_AT=<name>` stops it there with SIGSTOP (once), as a GC pause or a frozen VM
 * would, until the test sends SIGCONT. They prove that another process finishes the turn without
 * losing a decision or running a call twice, and that the stalled one, fenced, then does nothing.
 * Unset in production.
 */
export type CrashPointName = 'after-decision' | 'after-claim' | 'before-tool' | 'after-marker' | 'after-tool' | 'mid-answer' | 'before-answer';

let stalled = false;

export function crashPoint(name: CrashPointName): void {
  if (process.env.COUNTERSIGN_CRASH_AT === name) process.kill(process.pid, 'SIGKILL');
  if (process.env.COUNTERSIGN_STALL_AT === name && !stalled) {
    stalled = true;
    process.kill(process.pid, 'SIGSTOP');
  }
}
