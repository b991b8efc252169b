import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import type { McpHttpServerConfig } from '../../config/config-file.js';
import { createMcpServer, type McpServerHandle } from './mcp-server.js';

/**
 * The loader refuses `mcpServers.<name>.url` with credentials. Should such a URL reach the server
 * anyway (a config built in code, a later loader change), Node's fetch refuses every connect with
 * "Request cannot be constructed from a URL that includes credentials: <the whole URL>", which the
 * bot posts in the threads ("MCP server ops could not be started: …") and logs.
 */
const PASSWORD = 'hunter2-s3cret';
const closing: McpServerHandle[] = [];
afterEach(async () => {
  while (closing.length > 0) await closing.pop()?.close();
});

describe('an MCP server url with credentials that got past the loader', () => {
  it('is quoted in the notice and the logs without them', async () => {
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
    const parsed = parseConfigFile('mcpServers:\n  ops:\n    url: https://127.0.0.1:1/mcp\n', 'countersign.yml').mcpServers!.ops as McpHttpServerConfig;
    const config: McpHttpServerConfig = { ...parsed, url: `https://deploy:${PASSWORD}@127.0.0.1:1/mcp` };
    const notices: string[] = [];
    const handle = createMcpServer({ name: 'ops', config, env: {}, logger, problems: [], onToolsChanged: () => {}, onProblem: (message) => notices.push(message), onRecovered: () => {}, retry: { initialDelayMs: 60_000 } });
    closing.push(handle);
    await handle.start();

    expect(notices).toEqual([expect.stringContaining('MCP server ops could not be started: ')]);
    expect(notices[0]).toContain('https://[redacted]@127.0.0.1:1/mcp');
    expect(handle.status().error).toContain('[redacted]@');
    expect(text.join('')).toContain('mcp-server-problem');
    expect(`${notices.join('\n')}\n${text.join('')}\n${handle.status().error}`).not.toContain(PASSWORD);
  });
});
