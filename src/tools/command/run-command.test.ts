import { tmpdir } from 'node:os';
import { realpathSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createDirectCommandRunner } from './direct-command-runner.js';
import type { RunCommand } from './run-command.js';
import { isAlive } from './processes.test-support.js';
import { createSpawnerCommandRunner } from './spawner-client.js';

const NODE = process.execPath;
const PRINT_ARGS = 'console.log(JSON.stringify(process.argv.slice(1)))';
const defaults = { timeoutMs: 10_000, outputLimit: 4000 };
const node = (script: string, ...args: string[]) => [NODE, '-e', script, ...args];

const direct = createDirectCommandRunner();
const spawner = createSpawnerCommandRunner();

afterEach(() => {
  vi.unstubAllEnvs();
});
afterAll(() => Promise.all([direct.close(), spawner.close()]));

// One behaviour, two runners: spawning from this process, and asking the spawner process to.
describe.each<{ runner: string; runCommand: RunCommand }>([
  { runner: 'direct', runCommand: direct.run },
  { runner: 'spawner', runCommand: spawner.run },
])('runCommand ($runner)', ({ runCommand }) => {
  it('passes hostile-looking values as single literal arguments, with no shell in between', async () => {
    const hostile = ['x; rm -rf /', '$(id)', '`id`', 'a && b | c > /tmp/owned', '$HOME', '*'];
    const result = await runCommand({ argv: node(PRINT_ARGS, ...hostile), ...defaults });

    expect(result).toMatchObject({ exitCode: 0, signal: null, timedOut: false, stderr: '' });
    expect(JSON.parse(result.stdout)).toEqual(hostile);
  });

  it('reports a failing exit code and stderr without throwing', async () => {
    const result = await runCommand({ argv: node('console.error("boom"); process.exit(3)'), ...defaults });
    expect(result).toMatchObject({ exitCode: 3, stderr: 'boom\n', timedOut: false });
    expect(result.error).toBeUndefined();
  });

  it('kills a command that outlives its timeout and says so', async () => {
    const result = await runCommand({ argv: node('setTimeout(() => {}, 60000)'), ...defaults, timeoutMs: 300 });

    expect(result).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGTERM', error: 'timed out after 300 ms' });
    expect(result.durationMs).toBeLessThan(3000);
  });

  it('follows up with SIGKILL when SIGTERM is ignored', async () => {
    const script = 'process.on("SIGTERM", () => {}); console.log("ready"); setTimeout(() => {}, 60000)';
    // Long enough for Node to start and install its handler on a busy machine, or SIGTERM wins the race.
    const result = await runCommand({ argv: node(script), ...defaults, timeoutMs: 1000, killGraceMs: 200 });

    expect(result).toMatchObject({ timedOut: true, signal: 'SIGKILL', stdout: 'ready\n' });
    expect(result.durationMs).toBeLessThan(3000);
  });

  it('also kills children of the command on timeout, not just the command', async () => {
    const script = `const child = require('node:child_process').spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'inherit' }); console.log(child.pid); setTimeout(() => {}, 60000)`;
    const result = await runCommand({ argv: node(script), ...defaults, timeoutMs: 500 });
    const grandchildPid = Number(result.stdout.trim());

    expect(result.timedOut).toBe(true);
    expect(result.durationMs).toBeLessThan(3000);
    await vi.waitFor(() => expect(isAlive(grandchildPid)).toBe(false));
  });

  it('stops what the command left running in its group once its timeout is up, though its result came before', async () => {
    // A background process that ignores SIGTERM (once Node installed the handler): the SIGKILL after the grace stops it.
    const background = `process.on('SIGTERM', () => {}); setInterval(() => {}, 60000)`;
    const script = `const child = require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(background)}], { stdio: 'ignore' }); child.unref(); console.log(child.pid);`;
    const result = await runCommand({ argv: node(script), ...defaults, timeoutMs: 1500, killGraceMs: 200 });
    const backgroundPid = Number(result.stdout.trim());
    try {
      expect(result).toMatchObject({ exitCode: 0, timedOut: false });
      await vi.waitFor(() => expect(isAlive(backgroundPid)).toBe(false), { timeout: 5000, interval: 50 });
    } finally {
      if (isAlive(backgroundPid)) process.kill(backgroundPid, 'SIGKILL');
    }
  });

  it('keeps the head and tail of long output and marks it truncated', async () => {
    const script = 'process.stdout.write("HEAD" + "x".repeat(100000) + "TAIL")';
    const result = await runCommand({ argv: node(script), ...defaults, outputLimit: 100 });

    expect(result.stdoutTruncated).toBe(true);
    expect(result.stderrTruncated).toBe(false);
    expect(result.stdout).toMatch(/^HEADx{46}\n… \[99908 characters dropped\] …\nx{46}TAIL$/);
  });

  it('throws, as spawn does, for an argument holding a NUL byte', async () => {
    await expect(runCommand({ argv: ['echo', 'a\u0000b'], ...defaults })).rejects.toMatchObject({
      name: 'TypeError',
      code: 'ERR_INVALID_ARG_VALUE',
      message: expect.stringContaining('must be a string without null bytes'),
    });
  });

  it('reports a missing executable instead of throwing', async () => {
    const result = await runCommand({ argv: ['countersign-no-such-command', '--help'], ...defaults });
    expect(result).toMatchObject({ error: 'command not found: countersign-no-such-command', exitCode: null, timedOut: false });
  });

  it('runs in the working directory, and reports one that does not exist', async () => {
    const directory = realpathSync(tmpdir());
    const result = await runCommand({ argv: node('console.log(process.cwd())'), ...defaults, workingDirectory: directory });
    expect(result.stdout.trim()).toBe(directory);

    const missing = await runCommand({ argv: node(''), ...defaults, workingDirectory: '/nonexistent/countersign' });
    expect(missing.error).toBe('working directory not found: /nonexistent/countersign');
  });

  it('does not hand the bot secrets to the command', async () => {
    vi.stubEnv('SLACK_BOT_TOKEN', 'xoxb-do-not-leak');
    vi.stubEnv('OPENAI_API_KEY', 'sk-do-not-leak');
    vi.stubEnv('DEPLOY_PASSWORD', 'do-not-leak');
    vi.stubEnv('COUNTERSIGN_VISIBLE', 'visible');
    const script = 'console.log(JSON.stringify(process.env))';
    const result = await runCommand({ argv: node(script), ...defaults, environment: { EXTRA: 'given' } });

    expect(result.stdout).not.toContain('do-not-leak');
    expect(JSON.parse(result.stdout)).toMatchObject({ COUNTERSIGN_VISIBLE: 'visible', EXTRA: 'given' });
  });

  it('stops the command when the abort signal fires', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const result = await runCommand({ argv: node('setTimeout(() => {}, 60000)'), ...defaults, abortSignal: controller.signal });

    expect(result).toMatchObject({ error: 'aborted', timedOut: false, signal: 'SIGTERM' });
    expect(result.durationMs).toBeLessThan(3000);
  });

  it('does not start a command whose signal aborts while it is being prepared', async () => {
    const controller = new AbortController();
    const pending = runCommand({ argv: node('setTimeout(() => console.log("ran"), 2000)'), ...defaults, workingDirectory: tmpdir(), abortSignal: controller.signal });
    controller.abort();
    const result = await pending;

    expect(result).toMatchObject({ stdout: '', exitCode: null, error: expect.stringMatching(/^aborted/) });
  });

  it('does not start a command whose signal has already aborted', async () => {
    const result = await runCommand({ argv: node('console.log("ran")'), ...defaults, abortSignal: AbortSignal.abort() });
    expect(result).toMatchObject({ error: 'aborted before start', stdout: '' });
  });
});
