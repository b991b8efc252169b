import { existsSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultSearchPath } from './default-search-path.js';
import { createDirectCommandRunner } from './direct-command-runner.js';
import { notWatched } from './held-spawn.js';
import { executable, noWatchdog, watchdogHolds } from './processes.test-support.js';
import { spawnCommand } from './run-command.js';

/**
 * Two kinds of command were spawned outright though the direct runner holds commands: a name
 * starting with `-`, and a command given no PATH. They ran before the watchdog held their group, so
 * one it then could not hold was reported "not started" though it had run.
 */
describe.skipIf(process.platform !== 'linux')('held spawn: a command whose name starts with -', () => {
  const directory = mkdtempSync(join(tmpdir(), 'countersign-held-'));
  const environment = { PATH: `${directory}:/usr/bin:/bin` };
  beforeAll(() => {
    // Marks that it ran, then stays, as a command the watchdog was meant to watch.
    executable(join(directory, '-x'), '#!/bin/sh\n: > "$1"\nexec sleep 60\n');
    executable(join(directory, '-echo'), '#!/bin/sh\nprintf \'[%s]\' "$@"\n');
    // Reached by a path relative to the working directory: binaries, as a script's interpreter is
    // handed that path and would take it for an option.
    mkdirSync(join(directory, '-sub'));
    symlinkSync('/usr/bin/touch', join(directory, '-sub', 'touch'));
    symlinkSync('/usr/bin/printf', join(directory, '-sub', 'printf'));
  });

  it.each([
    ['found on PATH', '-x'],
    ['a path relative to its working directory', '-sub/touch'],
  ])('does not run it when no watchdog holds its group (%s)', async (_case, command) => {
    const marker = join(mkdtempSync(join(tmpdir(), 'countersign-held-')), 'ran');
    const result = await spawnCommand({ argv: [command, marker], workingDirectory: directory, timeoutMs: 10_000, outputLimit: 1_000, environment, hold: noWatchdog(marker) });

    expect(result).toMatchObject({ exitCode: null, signal: null, error: notWatched(command) });
    expect(existsSync(marker), `${command} ran, though it was reported not started`).toBe(false);
  });

  it.each([
    ['found on PATH', ['-echo']],
    ['a path relative to its working directory', ['-sub/printf', '[%s]']],
  ])('runs it, held first, with the same arguments, once the watchdog holds its group (%s)', async (_case, command) => {
    const argv = [...command, '-a', '--', 'two words', ''];
    const run = (hold?: (pid: number) => Promise<boolean>) => spawnCommand({ argv, workingDirectory: directory, timeoutMs: 10_000, outputLimit: 1_000, environment, ...(hold && { hold }) });
    const outright = await run();
    const seen: boolean[] = [];
    const held = await run(watchdogHolds(seen));

    expect(outright).toMatchObject({ exitCode: 0, stdout: '[-a][--][two words][]' });
    expect(held).toMatchObject({ exitCode: 0, stdout: outright.stdout, stderr: outright.stderr });
    expect(seen, 'held until the watchdog held its group').toEqual([true]);
  });
});

describe.skipIf(process.platform !== 'linux' || defaultSearchPath() === undefined)('held spawn: a command given no PATH', () => {
  it('does not run it when no watchdog holds its group', async () => {
    const marker = join(mkdtempSync(join(tmpdir(), 'countersign-held-')), 'ran');
    const result = await spawnCommand({ argv: ['sh', '-c', ': > "$1"; exec sleep 60', 'sh', marker], timeoutMs: 10_000, outputLimit: 1_000, environment: {}, hold: noWatchdog(marker) });

    expect(result).toMatchObject({ exitCode: null, signal: null, error: notWatched('sh') });
    expect(existsSync(marker), 'sh ran, though it was reported not started').toBe(false);
  });

  it('runs it, held first, as spawn would (argv[0] as given, still no PATH), once the watchdog holds its group', async () => {
    // Its own argv as the kernel has it, then its environment (but PWD, which the stand-in sets).
    const argv = ['sh', '-c', 'tr "\\0" "|" < /proc/$$/cmdline; echo; env | grep -v "^PWD=" | sort', 'sh', 'one'];
    const run = (hold?: (pid: number) => Promise<boolean>) => spawnCommand({ argv, timeoutMs: 10_000, outputLimit: 10_000, environment: { LANG: 'C' }, ...(hold && { hold }) });
    const outright = await run();
    const seen: boolean[] = [];
    const held = await run(watchdogHolds(seen));

    expect(outright).toMatchObject({ exitCode: 0, stdout: `sh|-c|${argv[2]}|sh|one|\nLANG=C\n` });
    expect(held).toMatchObject({ exitCode: 0, stdout: outright.stdout, stderr: outright.stderr });
    expect(seen, 'held until the watchdog held its group').toEqual([true]);
  });

});

describe.skipIf(process.platform !== 'linux' || defaultSearchPath() === undefined)('held spawn: the direct runner, its watchdog running', () => {
  it('runs a command whose name starts with - and one given no PATH', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'countersign-held-'));
    executable(join(directory, '-echo'), '#!/bin/sh\nprintf \'[%s]\' "$@"\n');
    const runner = createDirectCommandRunner();
    try {
      const dashed = await runner.run({ argv: ['-echo', 'a b'], timeoutMs: 10_000, outputLimit: 1_000, environment: { PATH: `${directory}:/usr/bin:/bin` } });
      const noPath = await runner.run({ argv: ['sh', '-c', 'echo "${PATH-unset}"; env | grep -c "^PATH=" || :'], timeoutMs: 10_000, outputLimit: 1_000, environment: { PATH: undefined } });

      expect(dashed).toMatchObject({ exitCode: 0, stdout: '[a b]' });
      // The shell's own default PATH inside, none in the environment it passes on.
      expect(noPath).toMatchObject({ exitCode: 0 });
      expect(noPath.stdout.split('\n').slice(1)).toEqual(['0', '']);
    } finally {
      await runner.close();
    }
  });
});
