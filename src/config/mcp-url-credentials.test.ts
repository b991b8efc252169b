import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfigFile } from './config-file.js';
import { ConfigError } from './config-error.js';
import { createMcpServer, type McpServerHandle } from '../tools/mcp/mcp-server.js';

/**
 * Reviewer's test. http.bases[].url refuses credentials in the URL ("must not contain credentials;
 * use headers with ${VAR} instead"), but mcpServers.<name>.url accepts `https://user:password@host/`.
 * Node's fetch then refuses every connect with "Request cannot be constructed from a URL that
 * includes credentials: <the whole URL>", and that message is what the bot posts in the threads
 * ("MCP server ops could not be started: …") and logs: the password goes to Slack.
 */
const logger = pino({ level: 'silent' });
const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closing.length > 0) await closing.pop()!();
});

function problemsOf(yaml: string): string[] {
  try {
    parseConfigFile(yaml, 'countersign.yml');
    return [];
  } catch (error) {
    if (ConfigError.isInstance(error)) return error.problems.map((problem) => `${problem.field}: ${problem.message}`);
    throw error;
  }
}

describe('an MCP server url with a password in it', () => {
  it('is refused at load like an http base url with credentials, and never reaches a Slack notice', async () => {
    const yaml = 'mcpServers:\n  ops:\n    url: https://deploy:hunter2-s3cret@127.0.0.1:1/mcp\n';
    const found = problemsOf(yaml);
    if (found.length === 0) {
      // What the accepted config does: the first connect fails, and the notice posted to the threads quotes the password.
      const config = parseConfigFile(yaml, 'countersign.yml').mcpServers!.ops!;
      const notices: string[] = [];
      const handle: McpServerHandle = createMcpServer({ name: 'ops', config, env: {}, logger, problems: [], onToolsChanged: () => {}, onProblem: (message) => notices.push(message), onRecovered: () => {}, retry: { initialDelayMs: 60_000 } });
      closing.push(() => handle.close());
      await handle.start();
      expect(notices.join('\n')).not.toContain('hunter2-s3cret');
    }
    expect(found).toContainEqual(expect.stringContaining('countersign.yml mcpServers.ops.url'));
  });

  it('says what http.bases[].url says, for a user alone too', () => {
    const message = 'must not contain credentials; use headers with ${VAR} instead';
    expect(problemsOf('mcpServers:\n  ops:\n    url: https://token@mcp.internal/mcp\n')).toEqual([`countersign.yml mcpServers.ops.url: ${message}`]);
    expect(problemsOf('http:\n  bases: [{ url: "https://u:p@api.internal/" }]\n')).toEqual([`countersign.yml http.bases[0].url: ${message}`]);
  });
});
