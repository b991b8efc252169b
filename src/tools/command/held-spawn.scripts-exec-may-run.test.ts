import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { notWatched } from './held-spawn.js';
import { executable, noWatchdog, watchdogHolds } from './processes.test-support.js';
import { spawnCommand } from './run-command.js';

/**
 * Files whose `#!` line the kernel reads as no interpreter (ENOEXEC: Node's spawn, like the C
 * library's execvp, then runs them with /bin/sh) or reads otherwise than a plain split on spaces
 * would, and chains of scripts as long as the kernel follows: they run, so they must be held like
 * any command that runs. Taken for "would not run", they were spawned outright: they ran before any
 * watchdog held their group, and one the watchdog then could not hold was reported not started
 * though it ran.
 */

/** Marks that it ran (its last argument), then stays, as a command the watchdog was meant to watch. */
const BODY = 'for last; do :; done; : > "$last"; exec sleep 60\n';

describe.skipIf(process.platform !== 'linux')('held spawn: a script exec runs though its #! line is unusual', () => {
  const directory = mkdtempSync(join(tmpdir(), 'countersign-shebang-'));
  const chain = (count: number) => {
    // count scripts, each the interpreter of the one before; the last is run by /bin/sh.
    const dir = mkdtempSync(join(directory, 'chain-'));
    for (let k = count - 1; k >= 0; k--) {
      executable(join(dir, `s${k}`), k === count - 1 ? `#!/bin/sh\n${BODY}` : `#!${join(dir, `s${k + 1}`)}\n`);
    }
    return join(dir, 's0');
  };
  const cases: [string, () => string][] = [
    ['#! naming no interpreter (ENOEXEC: run with /bin/sh)', () => executable(join(directory, 'empty'), `#!\n${BODY}`)],
    ['#! line longer than the kernel reads (ENOEXEC: run with /bin/sh)', () => executable(join(directory, 'long'), `#!/${'a'.repeat(300)}\n${BODY}`)],
    ['#! interpreter ended by a NUL byte (the kernel stops the name there)', () => executable(join(directory, 'nul'), `#!/bin/sh\0x\n${BODY}`)],
    ['five #! scripts in a row (the kernel allows five)', () => chain(5)],
  ];

  it.each(cases)('runs when spawned outright: %s', async (_case, make) => {
    const command = make();
    const marker = join(mkdtempSync(join(tmpdir(), 'countersign-shebang-')), 'ran');
    const result = await spawnCommand({ argv: [command, marker], timeoutMs: 500, killGraceMs: 100, outputLimit: 1_000, environment: { PATH: '/usr/bin:/bin' } });
    expect(existsSync(marker), `${command} runs under a direct spawn: ${JSON.stringify(result)}`).toBe(true);
  });

  it.each(cases)('runs held, once let go, as the shell\'s exec runs it: %s', async (_case, make) => {
    const command = make();
    const marker = join(mkdtempSync(join(tmpdir(), 'countersign-shebang-')), 'ran');
    const held: boolean[] = [];
    const result = await spawnCommand({ argv: [command, marker], timeoutMs: 1_000, killGraceMs: 100, outputLimit: 1_000, environment: { PATH: '/usr/bin:/bin' }, hold: watchdogHolds(held) });
    expect(held).toEqual([true]);
    expect(existsSync(marker), `${command} runs held: ${JSON.stringify(result)}`).toBe(true);
  });

  it.each(cases)('does not run it when no watchdog holds its group: %s', async (_case, make) => {
    const command = make();
    const marker = join(mkdtempSync(join(tmpdir(), 'countersign-shebang-')), 'ran');
    const result = await spawnCommand({ argv: [command, marker], timeoutMs: 10_000, outputLimit: 1_000, environment: { PATH: '/usr/bin:/bin' }, hold: noWatchdog(marker) });

    expect(result).toMatchObject({ exitCode: null, signal: null, error: notWatched(command) });
    expect(existsSync(marker), `${command} ran, though it was reported not started`).toBe(false);
  });
});
