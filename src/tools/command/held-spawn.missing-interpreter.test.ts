import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnCommand } from './run-command.js';

describe.skipIf(process.platform !== 'linux')('held spawn: a script whose interpreter is missing', () => {
  // The commit: "A command that would not run anyway (not found, not executable ...) [is] spawned
  // outright as before, so the 'command not found' / 'could not start' errors are unchanged". A
  // script whose interpreter is missing passes canHold's checks, and the shell's exec reports it.
  it('reports a script whose interpreter is missing as a direct start does', async () => {
    const script = join(mkdtempSync(join(tmpdir(), 'countersign-review-')), 'tool.sh');
    writeFileSync(script, '#!/nonexistent/interpreter\necho hi\n');
    chmodSync(script, 0o755);
    const run = (hold?: () => Promise<boolean>) =>
      spawnCommand({ argv: [script, 'arg'], timeoutMs: 10_000, outputLimit: 10_000, environment: { PATH: '/usr/bin:/bin' }, ...(hold && { hold }) });
    const pick = ({ exitCode, error, stderr }: { exitCode: number | null; error?: string; stderr: string }) => ({ exitCode, error, stderr });
    const outright = pick(await run());
    const held = pick(await run(() => Promise.resolve(true)));
    expect(held).toEqual(outright);
  });

  it('reports a script whose interpreter is a script with a missing interpreter, or ends in \\r, as a direct start does', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'countersign-review-'));
    const write = (name: string, text: string) => {
      writeFileSync(join(directory, name), text);
      chmodSync(join(directory, name), 0o755);
      return join(directory, name);
    };
    const broken = write('broken', '#!/nonexistent/interpreter\n');
    for (const script of [write('nested', `#!${broken}\necho hi\n`), write('crlf', '#!/bin/sh\r\necho hi\r\n')]) {
      const run = (hold?: () => Promise<boolean>) =>
        spawnCommand({ argv: [script], timeoutMs: 10_000, outputLimit: 10_000, environment: { PATH: '/usr/bin:/bin' }, ...(hold && { hold }) });
      const outright = await run();
      expect(outright.error).toBe(`command not found: ${script}`);
      expect((await run(() => Promise.resolve(true))).error).toBe(outright.error);
    }
  });

  it('still holds a script whose interpreter is there', async () => {
    const script = join(mkdtempSync(join(tmpdir(), 'countersign-review-')), 'tool.sh');
    writeFileSync(script, '#!  /bin/sh -e\necho hi\n');
    chmodSync(script, 0o755);
    // What runs while it is held: the stand-in, not the script.
    const held: string[] = [];
    const result = await spawnCommand({
      argv: [script],
      timeoutMs: 10_000,
      outputLimit: 10_000,
      environment: { PATH: '/usr/bin:/bin' },
      hold: (pid) => {
        held.push(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '');
        return Promise.resolve(true);
      },
    });
    expect(result).toMatchObject({ exitCode: 0, stdout: 'hi\n' });
    expect(held).toEqual(['/bin/sh']);
  });
});
