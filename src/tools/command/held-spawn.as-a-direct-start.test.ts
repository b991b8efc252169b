import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { executable } from './processes.test-support.js';
import { spawnCommand } from './run-command.js';

/**
 * Held through /bin/sh, a command saw two things a direct start does not: the stand-in's `read`
 * overwrote the variable `_` (which bash puts in the environment of every program it starts), and an
 * ELF binary whose loader is missing was `exec`ed by the shell (exit 127 and dash's message) instead
 * of reported "command not found", as a missing `#!` interpreter already is.
 */
const environment = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
const held = () => Promise.resolve(true);
// An ELF binary, and where it names its loader: -1 but on an x86-64 glibc system, where the ELF test is skipped.
const elf = existsSync('/bin/true') ? readFileSync('/bin/true') : undefined;
const loader = elf?.indexOf('/lib64/ld-linux-x86-64.so.2') ?? -1;

describe.skipIf(process.platform !== 'linux')('held spawn: what a held command sees, as a direct start', () => {
  it('passes the variable `_` on unchanged, given a PATH or not', async () => {
    for (const env of [{ ...environment, _: '/usr/local/bin/node' }, { _: '/usr/local/bin/node' }]) {
      const run = (hold?: () => Promise<boolean>) => spawnCommand({ argv: ['env'], timeoutMs: 10_000, outputLimit: 100_000, environment: env, ...(hold && { hold }) });
      expect((await run()).stdout).toContain('_=/usr/local/bin/node\n');
      expect((await run(held)).stdout).toContain('_=/usr/local/bin/node\n');
    }
  });

  it.skipIf(loader < 0)('reports an ELF binary whose loader is missing as a direct start does, and still holds one whose loader is there', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'countersign-held-'));
    const broken = Buffer.from(elf!);
    broken.write('/lib64/ld-linux-x86-64.so.X', loader, 'latin1');
    const binary = executable(join(directory, 'tool'), broken);
    const run = (hold?: (pid: number) => Promise<boolean>) => spawnCommand({ argv: [binary], timeoutMs: 10_000, outputLimit: 1000, environment, ...(hold && { hold }) });
    const pick = ({ exitCode, error, stderr }: { exitCode: number | null; error?: string; stderr: string }) => ({ exitCode, error, stderr });
    expect(pick(await run())).toEqual({ exitCode: null, error: `command not found: ${binary}`, stderr: '' });
    expect(pick(await run(held))).toEqual({ exitCode: null, error: `command not found: ${binary}`, stderr: '' });

    // The same binary with its loader there: held (the stand-in runs until it is let go), and runs.
    const working = executable(join(directory, 'working'), elf!);
    const heldAs: string[] = [];
    const result = await spawnCommand({
      argv: [working],
      timeoutMs: 10_000,
      outputLimit: 1000,
      environment,
      hold: (pid) => {
        heldAs.push(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '');
        return Promise.resolve(true);
      },
    });
    expect(result).toMatchObject({ exitCode: 0 });
    expect(heldAs).toEqual(['/bin/sh']);
  });
});
