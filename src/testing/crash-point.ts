/**
 * Test-only fault injection: `COUNTERSIGN_CRASH_AT=<name>` kills the process with SIGKILL when it
 * reaches the named point, so the end-to-end tests can prove a restart (or another replica) finishes
 * the turn without losing a decision or running an approved call twice. Unset in production.
 */
export type CrashPointName = 'after-decision' | 'after-tool' | 'mid-answer' | 'before-answer';

export function crashPoint(name: CrashPointName): void {
  if (process.env.COUNTERSIGN_CRASH_AT === name) process.kill(process.pid, 'SIGKILL');
}
