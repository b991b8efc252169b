import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeMcpHttpServer } from '../../../test/fixtures/mcp-http-server.js';
import { parseConfigFile } from '../../config/config-file.js';
import { createMcpServer } from './mcp-server.js';
import { until } from './until.test-support.js';

/**
 * An MCP server over Streamable HTTP that changes its tools says so with
 * notifications/tools/list_changed on the event stream the client opens with a GET. @ai-sdk/mcp's
 * client does not handle notifications ("Unsupported message type", to onUncaughtError), and only
 * the stdio transport told the bot: before the fix an HTTP server's changes were never read until a
 * reconnect, so the bot kept offering (and running) a tool the server had removed or redefined.
 */
const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closing.length > 0) await closing.pop()!();
});
const context = { requesterId: 'UALICE', teamId: 'T1', channel: 'C1', threadTs: '1.1', toolCallId: 'call_1', idempotencyKey: 'k1' };

const STATUS = { name: 'status', inputSchema: { type: 'object', properties: {} } };
const DEPLOY = { name: 'deploy', inputSchema: { type: 'object', properties: { service: { type: 'string' } } } };

describe('an HTTP MCP server that changes its tools', () => {
  it('has its tools read again on notifications/tools/list_changed, as a stdio server does', { timeout: 30_000 }, async () => {
    const fake = await startFakeMcpHttpServer([STATUS, DEPLOY], { listChanged: true });
    closing.push(() => fake.close());
    const config = parseConfigFile(`mcpServers:\n  ops:\n    url: ${fake.url}\n`, 'test.yml').mcpServers!.ops!;
    const logged: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line) as Record<string, unknown>) });
    let changes = 0;
    const handle = createMcpServer({ name: 'ops', config, env: {}, logger, problems: [], onToolsChanged: () => void (changes += 1), onProblem: () => {}, onRecovered: () => {} });
    closing.push(() => handle.close());
    await handle.start();
    expect(handle.tools().map((tool) => tool.name)).toEqual(['ops.status', 'ops.deploy']);
    const heldDeploy = handle.tools().find((tool) => tool.name === 'ops.deploy')!;
    await until(() => fake.openStreams() > 0, "the client's event stream open");

    const changesBefore = changes;
    fake.setTools([STATUS]);
    await until(() => changes > changesBefore, 'the tools read again');

    expect(handle.tools().map((tool) => tool.name)).toEqual(['ops.status']);
    expect(logged).toContainEqual(expect.objectContaining({ event: 'mcp-tools-refreshed', mcpServer: 'ops', tools: ['ops.status'] }));
    // The removed tool no longer reaches the server.
    await expect(heldDeploy.execute({ service: 'api' }, context)).rejects.toThrow('MCP server ops no longer offers ops.deploy; ops.deploy did not run.');
    expect(fake.calls).toEqual([]);
  });
});
