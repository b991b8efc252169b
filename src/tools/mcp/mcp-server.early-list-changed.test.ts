import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { createMcpServer, type McpServerHandle } from './mcp-server.js';

/**
 * A stdio server whose tools grow right after start (a proxy whose backends connect, a
 * server loading plugins) answers the first tools/list with what it has and sends
 * notifications/tools/list_changed at once. When the notification arrives in the same chunk as
 * that answer, it is handled before attempt() marks the server connected. Before the fix refresh()
 * returned because the state was still 'connecting', and the bot kept the first, short list until
 * a reconnect; now the change is remembered and the list read again once connected.
 */
const logger = pino({ level: 'silent' });
const running: McpServerHandle[] = [];
afterEach(async () => {
  while (running.length > 0) await running.pop()?.close();
});

const SERVER = `
import { createInterface } from 'node:readline';
const tool = (name) => ({ name, inputSchema: { type: 'object', properties: {} } });
let lists = 0;
createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line);
  if (message.id === undefined) return;
  const send = (body, extra = '') => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: message.id, ...body }) + '\\n' + extra);
  if (message.method === 'initialize') return send({ result: { protocolVersion: message.params?.protocolVersion ?? '2025-06-18', capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'proxy', version: '1' } } });
  if (message.method === 'tools/list') {
    lists += 1;
    const tools = lists === 1 ? [tool('status')] : [tool('status'), tool('deploy')];
    // The first answer and the news that the list changed, in one write.
    return send({ result: { tools } }, lists === 1 ? JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }) + '\\n' : '');
  }
  send({ error: { code: -32601, message: 'Method not found' } });
});
process.stdin.on('end', () => process.exit(0));
`;

describe('tools/list_changed sent together with the first tools/list answer', () => {
  it('is not lost: the bot lists the tools again and offers deploy', async () => {
    const config = parseConfigFile(`mcpServers:\n  ops:\n    command: ${JSON.stringify(process.execPath)}\n    args: ["--input-type=module", "-e", ${JSON.stringify(SERVER)}]\n`, 'test.yml').mcpServers!.ops!;
    const handle = createMcpServer({ name: 'ops', config, env: { PATH: process.env.PATH }, logger, problems: [], onToolsChanged: () => {}, onProblem: () => {}, onRecovered: () => {} });
    running.push(handle);
    await handle.start();
    expect(handle.status().state).toBe('connected');
    await vi.waitFor(() => expect(handle.tools().map((tool) => tool.name)).toEqual(['ops.status', 'ops.deploy']), { timeout: 5000 });
  });
});
