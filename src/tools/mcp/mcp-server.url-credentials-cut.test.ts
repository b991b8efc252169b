import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { createMcpServer, type McpServerHandle } from './mcp-server.js';

/**
 * No part of a URL's password is logged when a stdio server's long line is cut. 88ea7c2 had the MCP
 * server's redactor replace the userinfo of every URL in what it quotes, the logs and stdio servers'
 * stderr included. But the stdio transport slices a long line to its cap plus `redact.lookaheadBytes`
 * BEFORE calling the redactor (stdio-transport.ts `quoted`, and the stderr line kept up to
 * STDERR_LINE_CHARACTERS plus the lookahead), and the lookahead covered only configured secrets (0 when
 * there are none). A URL whose userinfo straddled the cut reached withoutUrlCredentials without its `@`,
 * was not recognised, and the cut kept `scheme://user:` and the start of the password, which was logged
 * (warn for a stdout line that is not JSON-RPC, debug for stderr): a stdio server logging its database
 * URL on a long line was all it took. So it was until 350d660.
 */
const PASSWORD = 'S3cretPassw0rdLong';
const URL_WITH_CREDENTIALS = `postgres://admin:${PASSWORD}@db.internal:5432/app`;
// The cut after 200 characters of a stdout line, and after 4096 of a stderr line, falls inside the password.
const STDOUT_LINE = `${'.'.repeat(200 - 'postgres://admin:S3cretPassw0rd'.length)}${URL_WITH_CREDENTIALS} connected`;
const STDERR_LINE = `${'-'.repeat(4096 - 'postgres://admin:S3cretPassw0rd'.length)}${URL_WITH_CREDENTIALS} connected`;

const closing: McpServerHandle[] = [];
afterEach(async () => {
  while (closing.length > 0) await closing.pop()?.close();
});

describe('a stdio MCP server quoting a URL with credentials on a long line', () => {
  it('has no part of the password logged when the line is cut', { timeout: 30_000 }, async () => {
    const text: string[] = [];
    const logger = pino(
      { level: 'debug' },
      new Writable({
        write(chunk: Buffer, _encoding, callback) {
          text.push(chunk.toString('utf8'));
          callback();
        },
      }),
    );
    const script = `process.stderr.write(${JSON.stringify(`${STDERR_LINE}\n`)}); process.stdout.write(${JSON.stringify(`${STDOUT_LINE}\n`)}); process.stdin.resume();`;
    const yaml = `mcpServers:\n  ops:\n    command: ${JSON.stringify(process.execPath)}\n    args: ["-e", ${JSON.stringify(script)}]\n    connectTimeoutSeconds: 2\n`;
    const config = parseConfigFile(yaml, 'countersign.yml').mcpServers!.ops!;
    const handle = createMcpServer({ name: 'ops', config, env: { PATH: process.env.PATH }, logger, problems: [], onToolsChanged: () => {}, onProblem: () => {}, onRecovered: () => {}, retry: { initialDelayMs: 60_000 } });
    closing.push(handle);
    void handle.start();
    await vi.waitFor(() => {
      const logged = text.join('');
      expect(logged).toContain('not JSON-RPC');
      expect(logged).toContain('mcp-server-stderr');
    }, { timeout: 20_000, interval: 20 });

    const logged = text.join('');
    const leaks = logged.split('\n').filter((line) => line.includes('S3cretPassw0rd')).map((line) => (JSON.parse(line) as { event?: string; msg: string }).event ?? JSON.parse(line).msg.slice(0, 60));
    expect(leaks).toEqual([]);
  });
});
