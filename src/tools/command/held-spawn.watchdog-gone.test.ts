import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { spawnCommand } from './run-command.js';
import { hangingCommand, isAlive, readPids } from './processes.test-support.js';

const DIRECT_COMMAND_RUNNER = fileURLToPath(new URL('./direct-command-runner.ts', import.meta.url));
const leftovers: number[] = [];
afterEach(() => {
  for (const pid of leftovers.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
});
const newPidFile = () => join(mkdtempSync(join(tmpdir(), 'countersign-review-')), 'pids');
const waitForPids = (pidFile: string) => vi.waitFor(() => readPids(pidFile) ?? Promise.reject(new Error('not started')), { timeout: 10_000, interval: 20 });
const exited = (child: ChildProcess) => new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

describe.skipIf(process.platform !== 'linux')('held spawn: the watchdog died while a command was held', () => {
  // The commit: "released only once the process-group watchdog holds the group". A watchdog that
  // dies while a command waits for its word releases the command with no watchdog at all; a bot
  // killed then leaves that command running for good.
  it('leaves no command running when its watchdog died while it was held, then the bot is killed', async () => {
    const firstPids = newPidFile();
    const secondPids = newPidFile();
    const bot = `import { registerHooks } from 'node:module';
registerHooks({ resolve(specifier, context, next) { try { return next(specifier, context); } catch (error) { if (!specifier.startsWith('.') || !specifier.endsWith('.js')) throw error; return next(specifier.slice(0, -3) + '.ts', context); } } });
const { createDirectCommandRunner } = await import(${JSON.stringify(DIRECT_COMMAND_RUNNER)});
const { readFileSync } = await import('node:fs');
const runner = createDirectCommandRunner();
void runner.run({ argv: ${JSON.stringify(hangingCommand(firstPids))}, timeoutMs: 60000, outputLimit: 100 }).catch(() => {});
while (!(() => { try { return readFileSync(${JSON.stringify(firstPids)}, 'utf8').trim() !== ''; } catch { return false; } })()) await new Promise((r) => setTimeout(r, 20));
const watchdogPid = runner.watchdogPid();
// The watchdog cannot answer (stopped), then dies (the OOM killer, an operator) while the second command is held.
process.kill(watchdogPid, 'SIGSTOP');
void runner.run({ argv: ${JSON.stringify(hangingCommand(secondPids))}, timeoutMs: 60000, outputLimit: 100 }).catch(() => {});
setTimeout(() => process.kill(watchdogPid, 'SIGKILL'), 200);
setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', '--input-type=module', '-e', bot], { stdio: ['ignore', 'ignore', 'inherit'] });
    leftovers.push(child.pid!);
    const second = await waitForPids(secondPids);
    leftovers.push(...second, ...(readPids(firstPids) ?? []));

    child.kill('SIGKILL');
    await exited(child);

    await vi.waitFor(() => expect(second.filter(isAlive)).toEqual([]), { timeout: 10_000, interval: 50 });
  }, 30_000);
});

describe.skipIf(process.platform !== 'linux')('held spawn: no watchdog holds the group', () => {
  it('does not run the command, and says why', async () => {
    const pids = newPidFile();
    const result = await spawnCommand({ argv: hangingCommand(pids), timeoutMs: 10_000, outputLimit: 100, environment: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, hold: () => Promise.resolve(false) });

    expect(result).toMatchObject({ exitCode: null, signal: null, error: `could not start ${hangingCommand(pids)[0]}: the process-group watchdog is not running, so it was not started`, neverRan: true });
    expect(readPids(pids)).toBeUndefined();
  });
});
