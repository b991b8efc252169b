import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ErrorCode } from '../../errors/countersign-error.js';
import { hangingCommand, isAlive, readPids } from './processes.test-support.js';
import { createSpawnerCommandRunner, SPAWNER_ENTRY, SPAWNER_EXEC_ARGV } from './spawner-client.js';
import { requestProblem } from './spawner-protocol.js';

const QUICK = { timeoutMs: 10_000, outputLimit: 1000 };
const HANGING = { timeoutMs: 60_000, outputLimit: 1000 };
const echo = (text: string) => [process.execPath, '-e', `console.log(${JSON.stringify(text)})`];
const newPidFile = () => join(mkdtempSync(join(tmpdir(), 'countersign-spawner-')), 'pids');
const waitForPids = (pidFile: string) => vi.waitFor(() => readPids(pidFile) ?? Promise.reject(new Error('no pids yet')), { timeout: 10_000, interval: 20 });
const waitUntilGone = (pids: number[]) => vi.waitFor(() => expect(pids.filter(isAlive)).toEqual([]), { timeout: 10_000, interval: 20 });

const runners: Array<ReturnType<typeof createSpawnerCommandRunner>> = [];
const newRunner = () => {
  const runner = createSpawnerCommandRunner();
  runners.push(runner);
  return runner;
};

afterEach(async () => {
  vi.unstubAllEnvs();
  await Promise.all(runners.splice(0).map((runner) => runner.close()));
});

describe('the command spawner', () => {
  it('fails only the call in flight when it dies, leaves none of its processes behind, and the next call starts a new spawner', async () => {
    const runner = newRunner();
    expect((await runner.run({ argv: echo('before'), ...QUICK })).stdout).toBe('before\n');
    const pidFile = newPidFile();
    const call = runner.run({ argv: hangingCommand(pidFile), ...HANGING });
    const commandPids = await waitForPids(pidFile);
    const spawnerPid = runner.spawnerPid()!;

    process.kill(spawnerPid, 'SIGKILL');

    await expect(call).rejects.toMatchObject({
      code: ErrorCode.CommandRunnerFailed,
      message: `${process.execPath} did not finish: the command spawner was killed by SIGKILL; the command was stopped`,
    });
    await waitUntilGone(commandPids);
    expect(await runner.run({ argv: echo('after'), ...QUICK })).toMatchObject({ exitCode: 0, stdout: 'after\n' });
    expect(runner.spawnerPid()).not.toBe(spawnerPid);
  });

  it('is stopped with the bot: close stops the spawner and the commands it runs', async () => {
    const runner = newRunner();
    const pidFile = newPidFile();
    const call = runner.run({ argv: hangingCommand(pidFile), ...HANGING });
    const failure = call.catch((error: unknown) => error);
    const commandPids = await waitForPids(pidFile);
    const spawnerPid = runner.spawnerPid()!;

    await runner.close();

    expect(await failure).toMatchObject({ code: ErrorCode.CommandRunnerFailed, message: expect.stringContaining('the bot stopped while it ran') });
    await waitUntilGone([spawnerPid, ...commandPids]);
    await expect(runner.run({ argv: echo('late'), ...QUICK })).rejects.toThrow('the command runner is closed');
  });

  it('exits and stops its commands when the bot process dies abruptly (its IPC channel closes)', async () => {
    const pidFile = newPidFile();
    // A stand-in for the bot: forks the spawner, asks it to run a stuck command, prints the spawner's pid.
    const bot = `const spawner = require('node:child_process').fork(${JSON.stringify(SPAWNER_ENTRY)}, [], { serialization: 'advanced', execArgv: ${JSON.stringify(SPAWNER_EXEC_ARGV)}, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
spawner.on('message', (message) => { if (message.type === 'spawned') console.log(spawner.pid); });
spawner.send({ type: 'run', id: 1, argv: ${JSON.stringify(hangingCommand(pidFile))}, timeoutMs: 60000, outputLimit: 100, environment: { PATH: process.env.PATH } });`;
    const parent = spawn(process.execPath, ['-e', bot], { stdio: ['ignore', 'pipe', 'inherit'] });
    let printed = '';
    parent.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    const commandPids = await waitForPids(pidFile);
    const spawnerPid = await vi.waitFor(() => Number(printed.trim()) || Promise.reject(new Error('no spawner pid yet')), { timeout: 10_000, interval: 20 });

    parent.kill('SIGKILL');

    await waitUntilGone([spawnerPid, ...commandPids]);
  });

  it.skipIf(process.platform !== 'linux')('holds none of the bot secrets in its own environment', async () => {
    vi.stubEnv('SLACK_BOT_TOKEN', 'xoxb-spawner-must-not-hold');
    const runner = newRunner();
    await runner.run({ argv: echo('hi'), ...QUICK });
    expect(readFileSync(`/proc/${runner.spawnerPid()}/environ`, 'utf8')).not.toContain('xoxb-spawner-must-not-hold');
  });

  it('refuses malformed requests, naming the field', () => {
    const valid = { type: 'run', id: 1, argv: ['true'], timeoutMs: 1000, outputLimit: 100, environment: {} };
    expect(requestProblem(valid)).toBeUndefined();
    expect(requestProblem({ ...valid, argv: 'rm -rf /' })).toBe('argv must be a non-empty array of strings');
    expect(requestProblem({ ...valid, environment: { PATH: 1 } })).toBe('environment must map names to strings');
    expect(requestProblem({ ...valid, timeoutMs: -1 })).toBe('timeoutMs must be a number of milliseconds');
    expect(requestProblem({ ...valid, type: 'shell' })).toBe('type must be run or abort');
  });
});
