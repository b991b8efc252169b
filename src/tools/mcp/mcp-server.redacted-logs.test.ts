import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { createMcpServer, type McpServerHandle } from './mcp-server.js';

/**
 * What a stdio server writes is redacted before it is cut, so a secret across the cut does not
 * reach the log in part. The server knows its own token (its `env` passes it) and, like many Python
 * servers with a stray print(), writes a debug line on stdout, of which the "not JSON-RPC" warning
 * quotes the first 200 characters; a stderr line is kept up to 4096. Before the fix both were cut
 * first and redacted after, and the log held the token's first characters.
 */
const FIXTURE = join(import.meta.dirname, '../../../test/fixtures/mcp-stdio-server.mjs');
const SECRET = 'ghp_S3cretTokenValue0123456789abcdefXYZ';
const running: McpServerHandle[] = [];
afterEach(async () => {
  while (running.length > 0) await running.pop()?.close();
});

function capturingLogger() {
  const text: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      text.push(chunk.toString('utf8'));
      callback();
    },
  });
  return { logger: pino({ level: 'debug' }, destination), text };
}

/** What was logged once the log holds `awaited`. */
async function startWith(script: string, awaited: string) {
  const { logger, text } = capturingLogger();
  const yaml = `mcpServers:\n  gh:\n    command: ${JSON.stringify(process.execPath)}\n    args: ["--input-type=module", "-e", ${JSON.stringify(script)}]\n    env: { GITHUB_TOKEN: "\${GITHUB_TOKEN}" }\n`;
  const config = parseConfigFile(yaml, 'test.yml').mcpServers!.gh!;
  const handle = createMcpServer({
    name: 'gh',
    config,
    env: { PATH: process.env.PATH, GITHUB_TOKEN: SECRET },
    logger,
    problems: [],
    onToolsChanged: () => {},
    onProblem: () => {},
    onRecovered: () => {},
  });
  running.push(handle);
  await handle.start();
  expect(handle.status().state).toBe('connected');
  await vi.waitFor(() => expect(text.join('')).toContain(awaited));
  return text.join('');
}

describe('secrets in what a stdio MCP server writes, redacted before they are cut', () => {
  it('a short stdout debug line with the token is redacted whole', async () => {
    const script = `process.stdout.write('debug: using token ' + process.env.GITHUB_TOKEN + '\\n'); await import(${JSON.stringify(FIXTURE)});`;
    const logs = await startWith(script, 'not JSON-RPC');
    expect(logs).toContain('[redacted]');
    expect(logs).not.toContain(SECRET.slice(0, 12));
  });

  it('a stdout debug line whose token straddles character 200: the warning quotes [redacted], not the start of the token', async () => {
    const script = `process.stdout.write('debug: ' + 'x'.repeat(165) + ' token=' + process.env.GITHUB_TOKEN + ' ok\\n'); await import(${JSON.stringify(FIXTURE)});`;
    const logs = await startWith(script, 'not JSON-RPC');
    expect(logs).toContain(`${'x'.repeat(165)} token=[redacted]…`);
    expect(logs).not.toContain(SECRET.slice(0, 8));
  });

  it('a stderr line whose token straddles character 4096: the debug log has [redacted], not the start of the token', async () => {
    const script = `process.stderr.write('y'.repeat(4080) + ' token=' + process.env.GITHUB_TOKEN + '\\n'); await import(${JSON.stringify(FIXTURE)});`;
    const logs = await startWith(script, 'mcp-server-stderr');
    expect(logs).toContain(`${'y'.repeat(4080)} token=[redacted]…`);
    expect(logs).not.toContain(SECRET.slice(0, 8));
  });
});
