import type { Logger } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createProcessGroupWatchdog } from './process-group-watchdog.js';
import { groupLeader as sharedGroupLeader, isAlive } from './processes.test-support.js';

const waitUntilGone = (pids: number[]) => vi.waitFor(() => expect(pids.filter(isAlive)).toEqual([]), { timeout: 10_000, interval: 50 });

const leftovers: number[] = [];
afterEach(() => {
  for (const pid of leftovers.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
});

const groupLeader = () => sharedGroupLeader(leftovers);

/** Collects what the watchdog logs as warnings. */
function warningsLogger() {
  const warnings: unknown[] = [];
  const logger = { warn: (fields: unknown) => warnings.push(fields), error: () => {} } as unknown as Logger;
  return { logger, warnings };
}

/**
 * The watchdog's word is what the bot waits for before it uses a stdio MCP server: from then on, the
 * server's group goes with the bot however it dies.
 */
describe.skipIf(process.platform !== 'linux')('the process group watchdog', () => {
  it('confirms the group it holds, and stops it when the bot lets it go', async () => {
    const { logger, warnings } = warningsLogger();
    const watchdog = createProcessGroupWatchdog({ logger, confirmTimeoutMs: 60_000 });
    const pid = groupLeader();

    // Long before the minute is over: the watchdog answered.
    await watchdog.watch(pid);
    const watchdogPid = watchdog.watchdogPid()!;
    leftovers.push(watchdogPid);
    watchdog.close();

    await waitUntilGone([pid, watchdogPid]);
    expect(warnings).toEqual([]);
  });

  it('replaces a watchdog that cannot answer, the new one holding every group', async () => {
    const { logger, warnings } = warningsLogger();
    const watchdog = createProcessGroupWatchdog({ logger, confirmTimeoutMs: 200 });
    // The first group is in the argv of the watchdog it forks: nothing to wait for.
    const first = groupLeader();
    expect(await watchdog.watch(first)).toBe(true);
    const pid = groupLeader();
    const watchdogPid = watchdog.watchdogPid()!;
    leftovers.push(watchdogPid);
    // Stopped: it never answers the message that tells it the next group.
    process.kill(watchdogPid, 'SIGSTOP');

    expect(await watchdog.watch(pid)).toBe(true);
    expect(warnings).toEqual([expect.objectContaining({ event: 'command-watchdog-slow', pid })]);
    // Killed, not let go: a stopped watchdog let go would stop every group it held once it ran again.
    await waitUntilGone([watchdogPid]);
    expect([first, pid].filter(isAlive)).toEqual([first, pid]);
    const replacement = watchdog.watchdogPid()!;
    leftovers.push(replacement);
    expect(replacement).not.toBe(watchdogPid);
    // The new watchdog holds both: its channel closing stops them.
    watchdog.close();
    await waitUntilGone([first, pid, replacement]);
  });

  it('has a new watchdog take the groups still running when it dies', async () => {
    const watchdog = createProcessGroupWatchdog({ confirmTimeoutMs: 60_000 });
    const pid = groupLeader();
    await watchdog.watch(pid);
    // Answered: it runs.
    await watchdog.watch(groupLeader());
    const watchdogPid = watchdog.watchdogPid()!;
    leftovers.push(watchdogPid);

    process.kill(watchdogPid, 'SIGKILL');

    await vi.waitFor(() => expect(watchdog.watchdogPid()).not.toBe(watchdogPid), { timeout: 10_000, interval: 20 });
    const replacement = watchdog.watchdogPid()!;
    expect(replacement).toBeDefined();
    leftovers.push(replacement);
    watchdog.close();
    await waitUntilGone([pid, replacement]);
  });
});
