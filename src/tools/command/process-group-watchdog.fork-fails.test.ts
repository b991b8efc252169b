import { afterEach, describe, expect, it } from 'vitest';
import { createProcessGroupWatchdog } from './process-group-watchdog.js';
import { groupLeader as sharedGroupLeader, isAlive } from './processes.test-support.js';

const leftovers: number[] = [];
const realExecPath = process.execPath;
afterEach(() => {
  process.execPath = realExecPath;
  for (const pid of leftovers.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
});

const groupLeader = () => sharedGroupLeader(leftovers);

/**
 * The commit (4ff3cb8): "watch() settles true only when a watchdog holds the group ... if no watchdog
 * can be forked, watch() settles false". Node reports a failed fork (ENOENT: the node binary gone after
 * an upgrade; EAGAIN: the process limit reached; EACCES) asynchronously, as an 'error' event, never by
 * throwing from fork(): start()'s try/catch never sees it, replace() settles every pending group `true`
 * at once, and the command is let go with no watchdog at all.
 */
describe.skipIf(process.platform !== 'linux')('the process group watchdog, when it cannot be forked', () => {
  it('does not say it holds a group when the watchdog process never started', async () => {
    const pid = groupLeader();
    const watchdog = createProcessGroupWatchdog({ confirmTimeoutMs: 300 });
    // The watchdog's fork fails (as with ENOENT/EAGAIN/EACCES from the kernel).
    process.execPath = '/nonexistent/node';
    const held = await watchdog.watch(pid);
    process.execPath = realExecPath;
    // No watchdog process exists to kill the group if the bot is SIGKILLed now.
    expect(watchdog.watchdogPid(), 'no watchdog process exists').toBeUndefined();
    expect(held, 'watch() said a watchdog holds the group, though none was ever started').toBe(false);
    watchdog.close();
  });

  it('does not say so either for the next command, once the failed watchdog is known to be gone', async () => {
    const [first, second] = [groupLeader(), groupLeader()];
    const watchdog = createProcessGroupWatchdog({ confirmTimeoutMs: 300 });
    process.execPath = '/nonexistent/node';
    await watchdog.watch(first);
    // Give Node time to report the failed spawn ('error', 'close').
    await new Promise((resolve) => setTimeout(resolve, 200));
    const held = await watchdog.watch(second);
    process.execPath = realExecPath;
    expect(held, 'watch() said a watchdog holds the second group, though none runs').toBe(false);
    watchdog.close();
  });
});

describe.skipIf(process.platform !== 'linux')('a command (COUNTERSIGN_COMMAND_SPAWNER=off) when the watchdog cannot be forked', () => {
  it('is not run, and says the watchdog is not running (README/commit promise), rather than running unwatched', async () => {
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { createDirectCommandRunner } = await import('./direct-command-runner.js');
    const { hangingCommand, readPids } = await import('./processes.test-support.js');
    const pidFile = join(mkdtempSync(join(tmpdir(), 'countersign-review-')), 'pids');
    const argv = hangingCommand(pidFile);
    const runner = createDirectCommandRunner();
    process.execPath = '/nonexistent/node';
    const result = await runner.run({ argv, timeoutMs: 2_000, outputLimit: 100 });
    process.execPath = realExecPath;
    leftovers.push(...(readPids(pidFile) ?? []));
    expect(runner.watchdogPid(), 'no watchdog process exists').toBeUndefined();
    expect(readPids(pidFile), 'the command ran with no watchdog holding its group').toBeUndefined();
    expect(result.error).toContain('the process-group watchdog is not running');
    runner.close?.();
  });
});

describe.skipIf(process.platform !== 'linux')('the process group watchdog, when its replacement dies while it starts', () => {
  it('forks one more, which holds the groups still running', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { vi } = await import('vitest');
    // A "node" that never answers and dies after a moment: a watchdog that died while it booted.
    const dying = join(mkdtempSync(join(tmpdir(), 'countersign-review-')), 'node');
    writeFileSync(dying, '#!/bin/sh\nsleep 0.5\nexit 1\n', { mode: 0o755 });
    const pid = groupLeader();
    const watchdog = createProcessGroupWatchdog({ confirmTimeoutMs: 60_000 });
    expect(await watchdog.watch(pid)).toBe(true);
    const first = watchdog.watchdogPid()!;
    leftovers.push(first);
    process.execPath = dying;
    process.kill(first, 'SIGKILL');
    await vi.waitFor(() => expect(watchdog.watchdogPid()).not.toBe(first), { timeout: 10_000, interval: 10 });
    const booting = watchdog.watchdogPid();
    expect(booting, 'a replacement was forked').toBeDefined();
    process.execPath = realExecPath;
    await vi.waitFor(() => expect(watchdog.watchdogPid()).not.toBe(booting), { timeout: 10_000, interval: 10 });
    const replacement = watchdog.watchdogPid();
    expect(replacement, 'a watchdog holds the group once the booting one died').toBeDefined();
    leftovers.push(replacement!);
    watchdog.close();
    await vi.waitFor(() => expect([pid, replacement!].filter(isAlive)).toEqual([]), { timeout: 10_000, interval: 50 });
  });
});
