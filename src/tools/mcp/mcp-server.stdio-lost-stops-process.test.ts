import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { useClosing } from './http-mcp-fixture.test-support.js';
import { createMcpServer } from './mcp-server.js';
import { outcome, TOOL_CONTEXT as context } from './mutable-mcp-server.test-support.js';
import { until } from './until.test-support.js';

/**
 * 6533f1b had `lost()` retire the client instead of closing it. Over stdio, closing the client is what stops
 * the server's process (its transport's close: SIGTERM to its group). So a stdio connection taken as lost
 * while its process still ran (here: it closed its input, so a send fails "the MCP server process is not
 * running", a connection failure) kept that process running while a call was under way on it, and the
 * reconnect spawned a second process of the same server beside it: two servers side by side (one holding a
 * lock, a port, a single-instance resource; both doing their side effects), until the old call ended or its
 * timeout (up to 1 h). So it was until b1d5dc4: a stdio server taken as lost is stopped at once.
 */
const closeAfter = useClosing();

const SERVER = `
const { writeFileSync } = require('node:fs');
const readline = require('node:readline');
const [pidsFile] = process.argv.slice(2);
const send = (message) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\\n');
require('node:fs').appendFileSync(pidsFile, process.pid + '\\n');
setInterval(() => {}, 1000);
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line);
  if (message.id === undefined) return;
  if (message.method === 'initialize') return send({ id: message.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 's', version: '1' } } });
  if (message.method === 'tools/list') return send({ id: message.id, result: { tools: [{ name: 'migrate', inputSchema: { type: 'object', properties: { step: { type: 'string' } } } }] } });
  if (message.method === 'tools/call') {
    if (message.params.arguments.step === 'long') {
      // A long migration: it stops reading requests (closes its input) and works on; it answers later.
      process.stdin.destroy();
      try { require('node:fs').closeSync(0); } catch {}
      writeFileSync(pidsFile + '.long', String(process.pid));
      return;
    }
    return send({ id: message.id, result: { content: [{ type: 'text', text: 'ok' }] } });
  }
  send({ id: message.id, error: { code: -32601, message: 'Method not found' } });
});
`;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('a stdio MCP connection taken as lost while its process still runs a call', () => {
  it('does not leave that process running beside the new one it spawns', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'countersign-stdio-lost-'));
    const script = join(dir, 'server.cjs');
    const pidsFile = join(dir, 'pids');
    writeFileSync(script, SERVER);
    const yaml = `mcpServers:\n  db:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(script)}, ${JSON.stringify(pidsFile)}]\n    timeoutSeconds: 20\n`;
    const config = parseConfigFile(yaml, 'test.yml').mcpServers!.db!;
    const handle = createMcpServer({
      name: 'db',
      config,
      env: { PATH: process.env.PATH },
      logger: pino({ level: 'silent' }),
      problems: [],
      onToolsChanged: () => {},
      onProblem: () => {},
      onRecovered: () => {},
      retry: { initialDelayMs: 50 },
    });
    closeAfter(() => handle.close());
    await handle.start();
    const migrate = handle.tools()[0]!;
    const first = handle.status().pid!;

    // A long call under way on the first process, which closes its input and works on.
    const long = outcome(migrate.execute({ step: 'long' }, context) as Promise<unknown>);
    // Closed first (its processes stopped, a retired client's too), so the long call ends then rather than at its timeout.
    closeAfter(async () => {
      await handle.close();
      await long;
    });
    await until(() => existsSync(`${pidsFile}.long`), 'the long call received');

    // Further calls cannot be written to it: the connection is taken as lost, and the server is started again.
    const seen: unknown[] = [];
    for (let tries = 0; handle.status().state === 'connected' && handle.status().pid === first; tries += 1) {
      if (tries > 20) throw new Error(`never taken as lost: ${JSON.stringify(seen)}`);
      seen.push(await outcome(migrate.execute({ step: 'short' }, context) as Promise<unknown>));
    }
    await until(() => handle.status().state === 'connected' && handle.status().pid !== first, 'a new process connected');
    const pids = readFileSync(pidsFile, 'utf8').trim().split('\n').map(Number);

    expect({ processes: pids.length, firstStillRunning: alive(first) }).toEqual({ processes: 2, firstStillRunning: false });
  });
});
