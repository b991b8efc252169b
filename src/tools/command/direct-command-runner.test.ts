import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ErrorCode } from '../../errors/countersign-error.js';
import { createDirectCommandRunner } from './direct-command-runner.js';
import { childrenOf, exited, expectGroupGoneAfterKill, hangingCommand, isAlive, killedRightAfterFork, killedRightAfterSpawn, readPids } from './processes.test-support.js';

const DIRECT_COMMAND_RUNNER = fileURLToPath(new URL('./direct-command-runner.ts', import.meta.url));
const HANGING = { timeoutMs: 60_000, outputLimit: 1000 };
const QUICK = { timeoutMs: 10_000, outputLimit: 1000 };
const newPidFile = () => join(mkdtempSync(join(tmpdir(), 'countersign-direct-')), 'pids');
const waitForPids = (pidFile: string) => vi.waitFor(() => readPids(pidFile) ?? Promise.reject(new Error('not started')), { timeout: 10_000, interval: 20 });
const waitUntilGone = (pids: number[]) => vi.waitFor(() => expect(pids.filter(isAlive)).toEqual([]), { timeout: 10_000, interval: 50 });

const leftovers: number[] = [];
afterEach(() => {
  for (const pid of leftovers.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
});

/**
 * A stand-in for the bot with COUNTERSIGN_COMMAND_SPAWNER=off: `script` runs with `runner`, a
 * direct command runner (the very code), in scope.
 */
function startBot(script: string): ChildProcess {
  const bot = `import { registerHooks } from 'node:module';
registerHooks({ resolve(specifier, context, next) { try { return next(specifier, context); } catch (error) { if (!specifier.startsWith('.') || !specifier.endsWith('.js')) throw error; return next(specifier.slice(0, -3) + '.ts', context); } } });
const { createDirectCommandRunner } = await import(${JSON.stringify(DIRECT_COMMAND_RUNNER)});
const runner = createDirectCommandRunner();
${script}`;
  const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', '--input-type=module', '-e', bot], { stdio: ['ignore', 'ignore', 'pipe'] });
  if (child.pid !== undefined) leftovers.push(child.pid);
  return child;
}

/**
 * README: "no command outlives the bot", and "the commands behave the same either way". A direct
 * runner's commands lead process groups of their own (a timeout kills their children too), so
 * nothing took them down with the bot: another replica reported the call as interrupted while it
 * went on running.
 */
describe.skipIf(process.platform !== 'linux')('the direct runner (COUNTERSIGN_COMMAND_SPAWNER=off)', () => {
  it('leaves no command running when the bot process is killed outright (SIGKILL)', async () => {
    const pidFile = newPidFile();
    const bot = startBot(`await runner.run({ argv: ${JSON.stringify(hangingCommand(pidFile))}, timeoutMs: 60000, outputLimit: 100 });`);
    const commandPids = await waitForPids(pidFile);
    leftovers.push(...commandPids);

    bot.kill('SIGKILL');
    await exited(bot);

    await waitUntilGone(commandPids);
  });

  it.each([
    ['at once', 0],
    // Its channel is closed, and the event that says so gone, before its listeners are there.
    ['after a while', 300],
  ])('leaves no command running when the bot is killed between the start of its watchdog and anything it could tell it (watchdog ready %s)', async (_, watchdogStartDelayMs) => {
    const groupFile = join(mkdtempSync(join(tmpdir(), 'countersign-direct-')), 'group');
    const bot = startBot(`${killedRightAfterFork(groupFile, { watchdogStartDelayMs })}
await runner.run({ argv: ${JSON.stringify(hangingCommand(newPidFile()))}, timeoutMs: 60000, outputLimit: 100 });`);
    await expectGroupGoneAfterKill(bot, groupFile, leftovers);
  });

  // The watchdog was started by an earlier command, so only a message could tell it the new group.
  it.each([
    ['its first command (no watchdog yet)', ''],
    ['a later command (the watchdog runs)', `await runner.run({ argv: [process.execPath, '-e', ''], timeoutMs: 10000, outputLimit: 100 });`],
  ])('leaves no command running when the bot is killed right after spawning %s, before it told the watchdog', async (_, earlier) => {
    const groupFile = join(mkdtempSync(join(tmpdir(), 'countersign-direct-')), 'group');
    const bot = startBot(`${earlier}
${killedRightAfterSpawn(groupFile)}
await runner.run({ argv: ${JSON.stringify(hangingCommand(newPidFile()))}, timeoutMs: 60000, outputLimit: 100 });`);
    await expectGroupGoneAfterKill(bot, groupFile, leftovers);
  });

  it('leaves no command running when the bot dies of an uncaught exception, even without its watchdog', async () => {
    const pidFile = newPidFile();
    const bot = startBot(`process.on('SIGUSR2', () => { throw new Error('the bot crashed'); });
await runner.run({ argv: ${JSON.stringify(hangingCommand(pidFile))}, timeoutMs: 60000, outputLimit: 100 });`);
    const commandPids = await waitForPids(pidFile);
    leftovers.push(...commandPids);
    // The bot's children: the command (its group's leader) and the watchdog. Without the watchdog
    // only the bot itself, on its way out, can stop the command.
    const watchdogPids = await vi.waitFor(() => {
      const others = childrenOf(bot.pid!).filter((pid) => !commandPids.includes(pid));
      return others.length === 1 ? others : Promise.reject(new Error(`children: ${others}`));
    });
    leftovers.push(...watchdogPids);
    for (const pid of watchdogPids) process.kill(pid, 'SIGKILL');
    await waitUntilGone(watchdogPids);

    const exit = exited(bot);
    bot.kill('SIGUSR2');
    expect(await exit).toEqual({ code: 1, signal: null });

    await waitUntilGone(commandPids);
  });

  it('does not keep the bot process alive once its commands finished', async () => {
    const bot = startBot(`const result = await runner.run({ argv: [process.execPath, '-e', 'console.log(1)'], timeoutMs: 10000, outputLimit: 100 });
if (result.stdout !== '1\\n') throw new Error(JSON.stringify(result));`);
    let stderr = '';
    bot.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // Exits by itself, with nothing left to do: the watchdog it started holds no reference on it.
    expect(await exited(bot)).toEqual({ code: 0, signal: null });
    expect(stderr).toBe('');
  });

  it('is stopped with the bot: close fails the call in flight and stops its command', async () => {
    const runner = createDirectCommandRunner();
    const pidFile = newPidFile();
    const failure = runner.run({ argv: hangingCommand(pidFile), ...HANGING }).catch((error: unknown) => error);
    const commandPids = await waitForPids(pidFile);
    leftovers.push(...commandPids);
    const watchdogPid = runner.watchdogPid()!;
    expect(isAlive(watchdogPid)).toBe(true);

    await runner.close();

    expect(await failure).toMatchObject({ code: ErrorCode.CommandRunnerFailed, message: `${process.execPath} did not finish: the bot stopped while it ran; the command was stopped` });
    await waitUntilGone([...commandPids, watchdogPid]);
    await expect(runner.run({ argv: [process.execPath, '-e', ''], ...QUICK })).rejects.toThrow('the command runner is closed');
  });
});
