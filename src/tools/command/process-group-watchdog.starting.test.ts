import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createProcessGroupWatchdog } from './process-group-watchdog.js';
import { groupLeader, isAlive } from './processes.test-support.js';

const leftovers: number[] = [];
const realExecPath = process.execPath;
afterEach(() => {
  process.execPath = realExecPath;
  for (const pid of leftovers.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
});

/**
 * A watchdog just forked gets `startTimeoutMs` to confirm its groups, a running one `confirmTimeoutMs`.
 * A command that arrives while the forked one still starts must wait for the rest of its start
 * allowance too: with `confirmTimeoutMs` it killed the starting watchdog and forked another, which the
 * next command killed in turn, so where Node takes longer than that to start, and commands come more
 * often, no watchdog ever ran and every command was refused as unwatched. Scaled down: Node starts in
 * 0.4 s, confirm 50 ms, start 1.5 s.
 */
describe.skipIf(process.platform !== 'linux')('the process group watchdog, while a new one starts', () => {
  it('does not refuse commands because more arrive while its watchdog starts', async () => {
    // A "node" that takes 0.4 s to start, as a loaded host's does.
    const slowNode = join(mkdtempSync(join(tmpdir(), 'watchdog-starting-')), 'node');
    writeFileSync(slowNode, `#!/bin/sh\nsleep 0.4\nexec '${realExecPath}' "$@"\n`, { mode: 0o755 });
    process.execPath = slowNode;
    const watchdog = createProcessGroupWatchdog({ confirmTimeoutMs: 50, startTimeoutMs: 1_500 });
    const watches: Promise<boolean>[] = [];
    // One command every 100 ms for 2.5 s (longer than the start allowance).
    for (let i = 0; i < 25; i++) {
      watches.push(watchdog.watch(groupLeader(leftovers)));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const held = await Promise.all(watches);
    const watchdogPid = watchdog.watchdogPid();
    if (watchdogPid !== undefined) leftovers.push(watchdogPid);
    watchdog.close();
    expect(held.filter((h) => !h).length, 'commands refused as unwatched though a watchdog starts in 0.4 s of the 1.5 s allowed').toBe(0);
  }, 30_000);
});
