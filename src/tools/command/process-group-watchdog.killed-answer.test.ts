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
 * A group counts as held only once the current watchdog confirmed it. A watchdog that answered just as
 * its confirm timeout ran out (a busy bot sees both in one loop turn; timers run first) is SIGKILLed
 * and a new one forked for one more try; the dead one's answer, already in the bot's socket, settled
 * that second try `true`, so the command was let go before any live watchdog held it, and if the new
 * watchdog then died while it started (and the one forked after it too), none ran at all.
 */
describe.skipIf(process.platform !== 'linux')('the process group watchdog, a late answer from one it killed', () => {
  it('does not count the answer of a watchdog it killed as the replacement holding the group', async () => {
    // A "node" that never answers and dies after a moment: a watchdog that died while it started.
    const dying = join(mkdtempSync(join(tmpdir(), 'watchdog-killed-answer-')), 'node');
    writeFileSync(dying, '#!/bin/sh\nsleep 0.3\nexit 1\n', { mode: 0o755 });
    const watchdog = createProcessGroupWatchdog({ confirmTimeoutMs: 200, startTimeoutMs: 5_000 });
    expect(await watchdog.watch(groupLeader(leftovers))).toBe(true);
    const first = watchdog.watchdogPid()!;
    leftovers.push(first);
    // From the check phase: the next loop turn runs timers before it reads the watchdog's answer.
    await new Promise((resolve) => setImmediate(resolve));
    const held = watchdog.watch(groupLeader(leftovers));
    // The bot is busy past the confirm timeout; meanwhile the watchdog answers (its answer waits in the socket).
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 600);
    // The replacement that the timeout forks dies while it starts (as does the one forked after it).
    process.execPath = dying;
    const result = await held;
    expect(isAlive(first), 'the first watchdog was killed').toBe(false);
    // Both replacements die without answering: then no watchdog runs at all. Waited for by polling,
    // the second one's death being the barrier (each lives 0.3 s).
    const deadline = Date.now() + 10_000;
    while (watchdog.watchdogPid() !== undefined && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    process.execPath = realExecPath;
    const running = watchdog.watchdogPid();
    watchdog.close();
    expect(running, 'no watchdog process runs').toBeUndefined();
    expect(result, 'watch() said a watchdog holds the group (the command is let go), though the one that answered had been killed and none runs now').toBe(false);
  }, 30_000);
});
