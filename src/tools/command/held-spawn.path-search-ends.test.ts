import { chmodSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnCommand } from './run-command.js';

/**
 * Along PATH, Node's spawn (the C library's search) gives up at the first candidate whose exec fails
 * with anything but ENOENT/ENOTDIR/EACCES: the spawn fails and nothing runs. The held stand-in hands
 * the bare name to the shell's `exec`, which goes on along PATH past every failure: a symbolic link
 * loop of that name earlier on PATH had a later file of that name run, held, where a direct spawn
 * runs nothing. (A file being written, ETXTBSY, is not seen before the exec: a known difference.)
 */
describe.skipIf(process.platform !== 'linux')('held spawn: a PATH search the C library ends', () => {
  it('runs nothing, as a direct spawn, past a symbolic link loop of that name earlier on PATH (ELOOP)', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'countersign-path-loop-'));
    const first = join(directory, 'first');
    const later = join(directory, 'later');
    mkdirSync(first);
    mkdirSync(later);
    writeFileSync(join(later, 'deploy-tool'), '#!/bin/sh\necho "later copy ran"\n');
    chmodSync(join(later, 'deploy-tool'), 0o755);
    symlinkSync(join(first, 'deploy-tool'), join(first, 'deploy-tool'));
    const environment = { PATH: `${first}:${later}:/usr/bin:/bin` };
    const run = (hold?: (pid: number) => Promise<boolean>) =>
      spawnCommand({ argv: ['deploy-tool'], timeoutMs: 10_000, outputLimit: 1_000, environment, ...(hold && { hold }) }).then(
        (result) => ({ stdout: result.stdout, error: result.error }),
        (error: unknown) => ({ stdout: '', error: String(error) }),
      );

    const outright = await run();
    const held = await run(() => Promise.resolve(true));
    expect(outright).toEqual({ stdout: '', error: 'Error: spawn ELOOP' });
    expect(held).toEqual(outright);
  });
});
