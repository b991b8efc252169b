import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { createMcpServer, type McpServerHandle } from './mcp-server.js';

/**
 * An MCP server started through a wrapper script (`sh -c '… node server.mjs …'`, a common way to set
 * its environment), whose server does not exit on its own when stdin ends (it holds a timer, a pool…).
 */
const FIXTURE = join(import.meta.dirname, '../../../test/fixtures/mcp-stdio-server.mjs');
const logger = pino({ level: 'silent' });
const leftovers: number[] = [];
afterEach(() => {
  for (const pid of leftovers.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
});

function wrapperConfig(marker: string) {
  // Like a server holding a database pool: its event loop stays alive after stdin ends.
  const inner = `${JSON.stringify(process.execPath)} --input-type=module -e ${JSON.stringify(`await import(${JSON.stringify(FIXTURE)}); process.stdin.removeAllListeners('end'); setInterval(() => {}, 60000); /* ${marker} */`)}`;
  const script = `${inner}; echo "server stopped" >&2`;
  const yaml = `mcpServers:\n  s:\n    command: sh\n    args: [-c, ${JSON.stringify(script)}]\n`;
  return Object.values(parseConfigFile(yaml, 'test.yml').mcpServers!)[0]!;
}

function innerPids(marker: string): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((line) => line.includes(marker) && !line.includes(' sh -c') && !line.includes('ps -eo'))
    .map((line) => Number.parseInt(line.trim(), 10));
}

describe('an MCP stdio server started through a wrapper script', () => {
  it('close() ends (the bot can stop) and leaves no server process behind', { timeout: 30_000 }, async () => {
    const marker = `countersign-wrapper-${process.pid}-${Date.now()}`;
    const handle: McpServerHandle = createMcpServer({
      name: 's',
      config: wrapperConfig(marker),
      env: { PATH: process.env.PATH },
      logger,
      problems: [],
      onToolsChanged: () => {},
      onProblem: () => {},
      onRecovered: () => {},
    });
    await handle.start();
    expect(handle.status().state).toBe('connected');
    leftovers.push(...innerPids(marker));
    expect(leftovers.length).toBe(1);

    // close() sends SIGTERM to the wrapper and SIGKILL after 2 s; 10 s is far more than it needs.
    const outcome = await Promise.race([
      handle.close().then(() => 'closed'),
      new Promise((resolve) => setTimeout(() => resolve('close() still pending after 10 s'), 10_000)),
    ]);
    expect(outcome).toBe('closed');
    expect(innerPids(marker)).toEqual([]);
  });
});
