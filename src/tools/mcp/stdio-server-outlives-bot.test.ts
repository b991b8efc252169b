import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { childrenOf, exited, expectGroupGoneAfterKill, isAlive, killedRightAfterFork, killedRightAfterSpawn } from '../command/processes.test-support.js';

const STDIO_TRANSPORT = fileURLToPath(new URL('./stdio-transport.ts', import.meta.url));
const PROCESS_GROUP_GUARD = fileURLToPath(new URL('../command/process-group-guard.ts', import.meta.url));
const waitUntilGone = (pids: number[]) => vi.waitFor(() => expect(pids.filter(isAlive)).toEqual([]), { timeout: 10_000, interval: 50 });

const leftovers: number[] = [];
afterEach(() => {
  for (const pid of leftovers.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
});

/**
 * A stand-in for the bot: a stdio MCP server started through a wrapper script, whose server does
 * not exit when its stdin ends (so the end of the bot's pipes alone would not stop it), with the
 * guard the MCP tool source gives it. `script` runs after the server started; `prelude` before it.
 */
function startBot(pidFile: string, script: string, prelude = ''): ChildProcess {
  const server = `require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); process.stdin.resume(); setInterval(() => {}, 60000);`;
  const wrapper = `${JSON.stringify(process.execPath)} -e ${JSON.stringify(server)}; echo "server stopped" >&2`;
  const bot = `import { registerHooks } from 'node:module';
registerHooks({ resolve(specifier, context, next) { try { return next(specifier, context); } catch (error) { if (!specifier.startsWith('.') || !specifier.endsWith('.js')) throw error; return next(specifier.slice(0, -3) + '.ts', context); } } });
const { StdioTransport } = await import(${JSON.stringify(STDIO_TRANSPORT)});
const { createProcessGroupGuard } = await import(${JSON.stringify(PROCESS_GROUP_GUARD)});
${prelude}
const transport = new StdioTransport({ command: 'sh', args: ['-c', ${JSON.stringify(wrapper)}], env: { PATH: process.env.PATH }, processGroups: createProcessGroupGuard() });
await transport.start();
${script}`;
  const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', '--experimental-transform-types', '--input-type=module', '-e', bot], { stdio: ['ignore', 'ignore', 'pipe'] });
  if (child.pid !== undefined) leftovers.push(child.pid);
  return child;
}

/** The wrapper and the server it started, once the server wrote its pid. */
async function serverPids(bot: ChildProcess, pidFile: string): Promise<number[]> {
  const server = await vi.waitFor(() => Number(readFileSync(pidFile, 'utf8')), { timeout: 10_000, interval: 20 });
  const wrapper = childrenOf(bot.pid!).find((pid) => childrenOf(pid).includes(server));
  const pids = [server, ...(wrapper === undefined ? [] : [wrapper])];
  leftovers.push(...pids);
  return pids;
}

/**
 * A stdio MCP server runs in a process group of its own (so that close stops a wrapper's server
 * too), which the terminal's Ctrl-C and a kill of the bot's group no longer reach. So, as command
 * tools: nothing of it outlives the bot, however the bot ends.
 */
describe.skipIf(process.platform !== 'linux')('a stdio MCP server that ignores the end of its stdin', () => {
  it('does not outlive the bot process killed outright (SIGKILL)', async () => {
    const pidFile = join(mkdtempSync(join(tmpdir(), 'countersign-mcp-group-')), 'pid');
    const bot = startBot(pidFile, 'setInterval(() => {}, 60000);');
    const pids = await serverPids(bot, pidFile);

    bot.kill('SIGKILL');
    await exited(bot);

    await waitUntilGone(pids);
  });

  it.each([
    ['at once', 0],
    // Its channel is closed, and the event that says so gone, before its listeners are there.
    ['after a while', 300],
  ])('does not outlive the bot killed between the start of its watchdog and anything it could tell it (watchdog ready %s)', async (_, watchdogStartDelayMs) => {
    const directory = mkdtempSync(join(tmpdir(), 'countersign-mcp-group-'));
    const groupFile = join(directory, 'group');
    const bot = startBot(join(directory, 'pid'), '', killedRightAfterFork(groupFile, { watchdogStartDelayMs }));
    // The watchdog may stop the group before the server even wrote its pid: the group is what counts.
    await expectGroupGoneAfterKill(bot, groupFile, leftovers);
  });

  it('does not outlive the bot killed right after spawning it, before it told the watchdog', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'countersign-mcp-group-'));
    const groupFile = join(directory, 'group');
    const bot = startBot(join(directory, 'pid'), '', killedRightAfterSpawn(groupFile));
    await expectGroupGoneAfterKill(bot, groupFile, leftovers);
  });

  it('does not outlive the bot dying of an uncaught exception, even without its watchdog', async () => {
    const pidFile = join(mkdtempSync(join(tmpdir(), 'countersign-mcp-group-')), 'pid');
    const bot = startBot(pidFile, `process.on('SIGUSR2', () => { throw new Error('the bot crashed'); }); process.stderr.write('ready\\n'); setInterval(() => {}, 60000);`);
    // The server started (once its watchdog held it) and the bot listens for SIGUSR2.
    let stderr = '';
    bot.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await vi.waitFor(() => expect(stderr).toContain('ready'), { timeout: 10_000, interval: 20 });
    const pids = await serverPids(bot, pidFile);
    // The bot's children: the wrapper and the watchdog. Without the watchdog only the bot itself,
    // on its way out, can stop the server. A child that already exited may be listed until the
    // bot reaps it, which a loaded machine can delay past waitFor's default second.
    const watchdogPids = await vi.waitFor(() => {
      const others = childrenOf(bot.pid!).filter((pid) => !pids.includes(pid));
      return others.length === 1 ? others : Promise.reject(new Error(`children: ${others}`));
    }, { timeout: 10_000, interval: 50 });
    leftovers.push(...watchdogPids);
    for (const pid of watchdogPids) process.kill(pid, 'SIGKILL');
    await waitUntilGone(watchdogPids);

    const exit = exited(bot);
    bot.kill('SIGUSR2');
    expect(await exit).toEqual({ code: 1, signal: null });

    await waitUntilGone(pids);
  });
});
