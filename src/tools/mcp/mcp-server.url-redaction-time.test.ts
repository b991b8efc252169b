import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { createMcpServer, type McpServerHandle } from './mcp-server.js';

/**
 * An MCP tool result is stripped of URL userinfo in linear time. 88ea7c2 made every MCP server's redactor
 * also strip URL userinfo (redactingUrlCredentials), applied to each tool result whole, before the cut to
 * outputLimit. Its pattern, /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#]*@/gi, had an unbounded scheme: in a run of
 * letters, digits, dots, `+` and `-` with a word boundary at every few characters (`a.a.a.…`, `x-y-z-…`),
 * each boundary started a scan to the end of the run, so the cost was quadratic in the run's length
 * (short-error.ts bounds its scheme to 32 characters for exactly this reason). A file, web page, issue
 * body or log line an MCP tool returns is untrusted text: 200 KB of it blocked the bot's event loop for
 * tens of seconds (about 1 MB: minutes), so every thread, click and Slack ack of this process stalled.
 * So it was until 5a44f8a. (The test has no bound on the timing, only the guard below against a hang:
 * the project has no timed assertions in tests.)
 */
const FILESYSTEM_SERVER = join(import.meta.dirname, '../../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const context = { requesterId: 'UALICE', teamId: 'T1', channel: 'C1', threadTs: '1.1', toolCallId: 'call_1', idempotencyKey: 'k1' };
const running: McpServerHandle[] = [];
afterEach(async () => {
  while (running.length > 0) await running.pop()?.close();
});

describe('an MCP tool result of dotted text', () => {
  it('is redacted in linear time, not quadratic: a 400 KB answer does not block the event loop for a minute', { timeout: 180_000 }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'countersign-mcp-'));
    writeFileSync(join(root, 'dotted.txt'), 'a.'.repeat(200_000));
    const yaml = `command: ${JSON.stringify(process.execPath)}\nargs: [${JSON.stringify(FILESYSTEM_SERVER)}, ${JSON.stringify(root)}]\n`;
    const config = Object.values(parseConfigFile(`mcpServers:\n  fs:\n${yaml.replace(/^/gm, '    ')}`, 'test.yml').mcpServers!)[0]!;
    const handle = createMcpServer({
      name: 'fs',
      config,
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
      logger: pino({ level: 'silent' }),
      problems: [],
      onToolsChanged: () => {},
      onProblem: () => {},
      onRecovered: () => {},
    });
    running.push(handle);
    await handle.start();
    const read = handle.tools().find((tool) => tool.name === 'fs.read_text_file')!;

    // Not a performance assertion: a guard against the quadratic redaction coming back, which on this
    // 400 KB answer blocked the event loop for about a minute (20 s at 200 KB); it now takes
    // milliseconds. Whether the event loop stalls cannot be observed without a clock, so the bound is
    // set far above the linear cost on a loaded machine and far below the quadratic one.
    const started = performance.now();
    const result = (await read.execute({ path: join(root, 'dotted.txt') }, context)) as { text: string };
    const took = performance.now() - started;
    expect(result.text.startsWith('a.a.a.')).toBe(true);
    expect(took).toBeLessThan(10_000);
  });
});
