import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { createMcpServer, type McpServerHandle } from './mcp-server.js';
import { until } from './until.test-support.js';

/**
 * An MCP stdio server that starts a long-lived helper process the default way (Node's
 * `stdio: 'inherit'`, Python's `subprocess.Popen` without redirects): the helper shares the
 * server's stdin, stdout and stderr pipes. Then the server itself dies.
 */
const FIXTURE = join(import.meta.dirname, '../../../test/fixtures/mcp-stdio-server.mjs');
const logger = pino({ level: 'silent' });
const handles: McpServerHandle[] = [];
let marker = '';

function markedPids(): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    // The helper only: the server's own command line quotes the marker too.
    .filter((line) => marker !== '' && line.includes(marker) && !line.includes('--input-type') && !line.includes('ps -eo'))
    .map((line) => Number.parseInt(line.trim(), 10));
}

afterEach(async () => {
  for (const pid of markedPids()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
  await Promise.all(handles.splice(0).map((handle) => handle.close()));
});

describe('an MCP stdio server whose helper process shares its pipes', () => {
  async function startServerWithHelper(more = '') {
    marker = `countersign-helper-${process.pid}-${Date.now()}`;
    const helper = `spawn(process.execPath, ['-e', 'setInterval(() => {}, 60000)', ${JSON.stringify(marker)}], { stdio: 'inherit' });`;
    const script = `import { spawn } from 'node:child_process'; ${helper} await import(${JSON.stringify(FIXTURE)});`;
    const yaml = `mcpServers:\n  s:\n    command: ${JSON.stringify(process.execPath)}\n    args: ["--input-type=module", "-e", ${JSON.stringify(script)}]\n${more}`;
    const config = Object.values(parseConfigFile(yaml, 'test.yml').mcpServers!)[0]!;
    const problems: string[] = [];
    const handle = createMcpServer({
      name: 's',
      config,
      env: { PATH: process.env.PATH },
      logger,
      problems: [],
      onToolsChanged: () => {},
      onProblem: (message) => problems.push(message),
      onRecovered: () => {},
      retry: { initialDelayMs: 50, maxDelayMs: 200, stableAfterMs: 60_000 },
    });
    handles.push(handle);
    await handle.start();
    expect(handle.status().state).toBe('connected');
    const serverPid = handle.status().pid!;
    expect(markedPids().length).toBe(1);
    return { handle, problems, serverPid };
  }

  it('is reported as stopped when the server process dies, and is reconnected', { timeout: 30_000 }, async () => {
    const { problems, serverPid } = await startServerWithHelper();
    // The server crashes (as the existing "reports a server that dies" test kills it).
    process.kill(serverPid, 'SIGKILL');
    await until(() => problems.length === 1, 'the "MCP server s stopped" report');
    expect(problems[0]).toMatch(/^MCP server s stopped: the process was killed by SIGKILL/);
  });

  it('fails a call made after the server died at once, instead of after the whole call timeout', { timeout: 30_000 }, async () => {
    const { handle, serverPid } = await startServerWithHelper('    timeoutSeconds: 5\n');
    const echo = handle.tools().find((tool) => tool.name === 's.echo')!;
    const context = { requesterId: 'UALICE', teamId: 'T1', channel: 'C1', threadTs: '1.1', toolCallId: 'call_1', idempotencyKey: 'k1' };
    await expect(echo.execute({ text: 'hi' }, context)).resolves.toMatchObject({ text: 'echo: hi' });
    process.kill(serverPid, 'SIGKILL');
    // Settles either way (at the latest when the 5 s call timeout ends it): a real barrier, no sleep.
    const started = Date.now();
    const error = await echo.execute({ text: 'again' }, context).then(
      () => new Error('the call succeeded'),
      (failure: unknown) => failure as Error,
    );
    expect({ message: error.message, failedWithin3s: Date.now() - started < 3000 }).toEqual({ message: expect.stringMatching(/not available|Connection closed|not running/), failedWithin3s: true });
  });
});
