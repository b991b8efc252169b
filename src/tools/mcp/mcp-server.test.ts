import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asSchema } from 'ai';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeMcpHttpServer, type FakeMcpHttpServer } from '../../../test/fixtures/mcp-http-server.js';
import type { ConfigProblem } from '../../config/config-error.js';
import { parseConfigFile } from '../../config/config-file.js';
import { createMcpServer, type CreateMcpServerOptions, type McpServerHandle } from './mcp-server.js';
import { until } from './until.test-support.js';

const FILESYSTEM_SERVER = join(import.meta.dirname, '../../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const context = { requesterId: 'UALICE', teamId: 'T1', channel: 'C1', threadTs: '1.1', toolCallId: 'call_1', idempotencyKey: 'k1' };
const logger = pino({ level: 'silent' });

const running: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (running.length > 0) await running.pop()?.close();
});

function serverConfig(yaml: string) {
  return Object.values(parseConfigFile(`mcpServers:\n  s:\n${yaml.replace(/^/gm, '    ')}`, 'test.yml').mcpServers!)[0]!;
}

interface Events {
  problems: string[];
  recovered: string[];
  changes: number;
}

function startServer(name: string, yaml: string, extra: Partial<CreateMcpServerOptions> = {}): { handle: McpServerHandle; events: Events; problems: ConfigProblem[] } {
  const events: Events = { problems: [], recovered: [], changes: 0 };
  const problems: ConfigProblem[] = [];
  const handle = createMcpServer({
    name,
    config: serverConfig(yaml),
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    logger,
    problems,
    onToolsChanged: () => {
      events.changes += 1;
    },
    onProblem: (message) => events.problems.push(message),
    onRecovered: (message) => events.recovered.push(message),
    retry: { initialDelayMs: 50, maxDelayMs: 200, stableAfterMs: 60_000 },
    ...extra,
  });
  running.push(handle);
  return { handle, events, problems };
}

function filesystemYaml(root: string, more = ''): string {
  return `command: ${JSON.stringify(process.execPath)}\nargs: [${JSON.stringify(FILESYSTEM_SERVER)}, ${JSON.stringify(root)}]\n${more}`;
}

describe('an MCP server over stdio (@modelcontextprotocol/server-filesystem)', () => {
  it('offers its tools as server.tool definitions with the server schema, annotations as metadata and no approval rule', async () => {
    const root = mkdtempSync(join(tmpdir(), 'countersign-mcp-'));
    writeFileSync(join(root, 'notes.txt'), 'hello from the file');
    const { handle } = startServer('fs', filesystemYaml(root));
    await handle.start();

    expect(handle.status()).toMatchObject({ server: 'fs', state: 'connected' });
    const names = handle.tools().map((tool) => tool.name);
    expect(names).toContain('fs.read_text_file');
    expect(names).toContain('fs.write_file');
    const read = handle.tools().find((tool) => tool.name === 'fs.read_text_file')!;
    const write = handle.tools().find((tool) => tool.name === 'fs.write_file')!;
    expect(read.metadata).toMatchObject({ source: 'mcp', server: 'fs', tool: 'read_text_file', annotations: { readOnlyHint: true } });
    // readOnlyHint is a hint: without trustReadOnlyHint no tool gets a rule, so all need approval.
    expect(read.approval).toBeUndefined();
    expect(write.approval).toBeUndefined();
    expect(await asSchema(write.inputSchema).jsonSchema).toMatchObject({ type: 'object', required: ['path', 'content'], additionalProperties: false });

    await expect(read.execute({ path: join(root, 'notes.txt') }, context)).resolves.toEqual({ text: 'hello from the file', truncated: false });
    await expect(read.execute({ path: '/etc/passwd' }, context)).rejects.toThrow(/fs.read_text_file reported an error: Access denied/);
    await write.execute({ path: join(root, 'out.txt'), content: 'written' }, context);
    expect(readFileSync(join(root, 'out.txt'), 'utf8')).toBe('written');
  });

  it('validates input against the server JSON Schema with ajv (the AI SDK does not)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'countersign-mcp-'));
    const { handle } = startServer('fs', filesystemYaml(root));
    await handle.start();
    const write = handle.tools().find((tool) => tool.name === 'fs.write_file')!;
    const schema = asSchema(write.inputSchema);
    expect(await schema.validate!({ path: 'a' })).toMatchObject({ success: false });
    expect(await schema.validate!({ path: 'a', content: 'b', extra: 1 })).toMatchObject({ success: false });
    expect(await schema.validate!({ path: 'a', content: 'b' })).toMatchObject({ success: true });
    await expect(write.execute({ path: join(root, 'x.txt') }, context)).rejects.toThrow(/Invalid input for fs.write_file: content: is required/);
  });

  it('trusts readOnlyHint only when the operator says so, and filters tools with include/exclude', async () => {
    const root = mkdtempSync(join(tmpdir(), 'countersign-mcp-'));
    const { handle } = startServer('fs', filesystemYaml(root, 'trustReadOnlyHint: true\ninclude: ["read_*", "write_file", "move_file"]\nexclude: [read_media_file]'));
    await handle.start();
    const byName = new Map(handle.tools().map((tool) => [tool.name, tool]));
    expect([...byName.keys()].sort()).toEqual(['fs.move_file', 'fs.read_file', 'fs.read_multiple_files', 'fs.read_text_file', 'fs.write_file']);
    expect(byName.get('fs.read_text_file')!.approval).toBe('never');
    expect(byName.get('fs.write_file')!.approval).toBeUndefined();
    expect(byName.get('fs.move_file')!.approval).toBeUndefined();
  });

  it('reports a server that dies, fails its calls meanwhile, reconnects with backoff and refreshes its tools', async () => {
    const root = mkdtempSync(join(tmpdir(), 'countersign-mcp-'));
    writeFileSync(join(root, 'a.txt'), 'A');
    const { handle, events } = startServer('fs', filesystemYaml(root), { retry: { initialDelayMs: 400, maxDelayMs: 400, stableAfterMs: 60_000 } });
    await handle.start();
    const read = handle.tools().find((tool) => tool.name === 'fs.read_text_file')!;
    const changesBefore = events.changes;
    const firstPid = handle.status().pid!;

    process.kill(firstPid, 'SIGKILL');
    await until(() => events.problems.length === 1, 'the problem report');
    // The server may still print a start-up line (its roots notice) after the connect cleared stderr: then it is the tail.
    expect(events.problems[0]).toMatch(/^MCP server fs stopped: the process was killed by SIGKILL(: [^\n]*)?\. Reconnecting/);
    expect(handle.status()).toMatchObject({ state: 'unavailable', error: expect.stringMatching(/^the process was killed by SIGKILL(: |$)/) });
    await expect(read.execute({ path: join(root, 'a.txt') }, context)).rejects.toThrow(/MCP server fs is not available \(the process was killed by SIGKILL(: [^\n]*)?\); fs.read_text_file did not run/);

    await until(() => handle.status().state === 'connected', 'the reconnect');
    expect(handle.status().pid).not.toBe(firstPid);
    expect(events.recovered).toEqual([expect.stringMatching(/^MCP server fs is back \(14 tools\)/)]);
    expect(events.changes).toBeGreaterThan(changesBefore);
    // The same definition object works again: a call that waited for approval is not orphaned.
    await expect(read.execute({ path: join(root, 'a.txt') }, context)).resolves.toMatchObject({ text: 'A' });
  });

  it('reports a server that cannot start once, and keeps retrying', async () => {
    const { handle, events } = startServer('broken', `command: ${JSON.stringify(process.execPath)}\nargs: ["-e", "console.error('missing API_URL'); process.exit(3)"]`);
    await handle.start();
    expect(handle.status()).toMatchObject({ state: 'unavailable', error: 'the process exited with code 3: missing API_URL' });
    expect(handle.tools()).toEqual([]);
    expect(events.problems).toEqual(['MCP server broken could not be started: the process exited with code 3: missing API_URL. Retrying in the background; its tools are unavailable until then.']);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(events.problems).toHaveLength(1);
  });

  it("redacts every secret the config reads, not only its own, from its problem, its status and the logs", async () => {
    // Another tool source's header secret, which this server learned some other way and prints.
    const secret = 'pd-live-credential-0123456789';
    const logLines: string[] = [];
    const { handle, events } = startServer('chatty', `command: ${JSON.stringify(process.execPath)}\nargs: ["-e", ${JSON.stringify(`console.error('token ${secret} rejected'); process.exit(3)`)}]`, {
      configSecrets: { variables: ['PAGERDUTY_API'], values: [secret] },
      logger: pino({ level: 'debug' }, { write: (line: string) => logLines.push(line) }),
    });
    await handle.start();
    expect(events.problems).toEqual(['MCP server chatty could not be started: the process exited with code 3: token [redacted] rejected. Retrying in the background; its tools are unavailable until then.']);
    expect(handle.status().error).toBe('the process exited with code 3: token [redacted] rejected');
    expect(logLines.some((line) => line.includes('mcp-server-problem'))).toBe(true);
    expect(logLines.filter((line) => line.includes(secret))).toEqual([]);
  });

  it('reports a command that does not exist', async () => {
    const { handle, events } = startServer('missing', 'command: /nonexistent/mcp-server');
    await handle.start();
    expect(events.problems[0]).toMatch(/could not be started: .*ENOENT/);
  });
});

describe('an MCP server over Streamable HTTP', () => {
  let fake: FakeMcpHttpServer;
  afterEach(async () => {
    await fake?.close();
  });

  const tools = [
    { name: 'get_status', description: 'Read the status', inputSchema: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] }, annotations: { readOnlyHint: true } },
    { name: 'delete_item', description: 'Delete an item', inputSchema: { type: 'object', properties: { id: { type: 'integer', minimum: 1 } }, required: ['id'] }, annotations: { destructiveHint: true } },
  ];

  it('sends headers filled from the environment, and the tools work', async () => {
    fake = await startFakeMcpHttpServer(tools);
    const events: string[] = [];
    const problems: ConfigProblem[] = [];
    const handle = createMcpServer({
      name: 'ops',
      config: serverConfig(`url: ${fake.url}\nheaders: { Authorization: "Bearer \${OPS_TOKEN}" }`),
      env: { OPS_TOKEN: 'ops-secret-1234' },
      logger,
      problems,
      onToolsChanged: () => {},
      onProblem: (message) => events.push(message),
      onRecovered: () => {},
    });
    running.push(handle);
    await handle.start();
    expect(problems).toEqual([]);
    expect(handle.tools().map((tool) => tool.name)).toEqual(['ops.get_status', 'ops.delete_item']);
    expect(fake.requestHeaders.every((headers) => headers.authorization === 'Bearer ops-secret-1234')).toBe(true);
    await expect(handle.tools()[1]!.execute({ id: 7 }, context)).resolves.toEqual({ text: '{"id":7}', truncated: false });
    expect(fake.calls).toEqual([{ name: 'delete_item', arguments: { id: 7 } }]);
  });

  it('does not read an answer past its byte cap: the call fails with why, the server stays connected', async () => {
    fake = await startFakeMcpHttpServer([{ ...tools[0]!, handle: ({ service }) => (service === 'big' ? 'x'.repeat(1_000_000) : `${String(service)} is up`) }]);
    const { handle } = startServer('ops', `url: ${fake.url}`, { maxResponseBytes: 64 * 1024 });
    await handle.start();
    const status = handle.tools()[0]!;
    // Before: @ai-sdk/mcp read the whole megabyte (any size) with response.json(), and the result was cut afterwards.
    await expect(status.execute({ service: 'big' }, context)).rejects.toThrow("ops.get_status failed: the MCP server's answer is larger than 65536 bytes; it was not read");
    expect(handle.status().state).toBe('connected');
    await expect(status.execute({ service: 'api' }, context)).resolves.toEqual({ text: 'api is up', truncated: false });
  });

  it('cuts a long error from the server (an HTTP error body) to a bounded length', async () => {
    const body = `maintenance ${'x'.repeat(5000)}`;
    const server = createServer((_request, response) => response.writeHead(500, { 'content-type': 'text/plain' }).end(body));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    running.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
    const { handle, events } = startServer('failing', `url: http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
    await handle.start();
    expect(events.problems).toHaveLength(1);
    expect(events.problems[0]).toContain('maintenance xxx');
    expect(events.problems[0]).toContain('x…. Retrying in the background');
    expect(events.problems[0]!.length).toBeLessThan(600);
  });

  it('collects an unset header variable as a configuration problem', () => {
    const problems: ConfigProblem[] = [];
    createMcpServer({
      name: 'ops',
      config: serverConfig('url: http://127.0.0.1:9/mcp\nheaders: { Authorization: "Bearer ${OPS_TOKEN}" }'),
      env: {},
      logger,
      problems,
      onToolsChanged: () => {},
      onProblem: () => {},
      onRecovered: () => {},
    });
    expect(problems).toEqual([{ field: 'mcpServers.ops.headers.Authorization', message: 'environment variable OPS_TOKEN is not set' }]);
  });

  it('starts without the server, reports it, and picks its tools up when it comes back', async () => {
    fake = await startFakeMcpHttpServer(tools);
    await fake.stop();
    const { handle, events } = startServer('ops', `url: ${fake.url}\nconnectTimeoutSeconds: 2`);
    await handle.start();
    expect(handle.status().state).toBe('unavailable');
    expect(events.problems).toHaveLength(1);
    expect(events.problems[0]).toMatch(/^MCP server ops could not be started: /);

    await fake.restart();
    await until(() => handle.status().state === 'connected', 'the connection');
    expect(handle.tools().map((tool) => tool.name)).toEqual(['ops.get_status', 'ops.delete_item']);
    expect(events.recovered).toEqual(['MCP server ops is back (2 tools).']);
  });

  it('notices a dead server on the next call, reconnects and refreshes the tool list', async () => {
    fake = await startFakeMcpHttpServer(tools);
    const { handle, events } = startServer('ops', `url: ${fake.url}\nconnectTimeoutSeconds: 2`);
    await handle.start();
    const status = handle.tools()[0]!;

    await fake.stop();
    // The tools/list read for the call is what meets the dead server: refused, nothing reached it.
    await expect(status.execute({ service: 'api' }, context)).rejects.toThrow(/could not be read \(.*\); ops\.get_status did not run/);
    expect(handle.status().state).not.toBe('connected');
    expect(events.problems).toHaveLength(1);

    fake.setTools([...tools, { name: 'restart', description: 'Restart', inputSchema: { type: 'object', properties: {} } }]);
    await fake.restart();
    await until(() => handle.status().state === 'connected', 'the reconnect');
    expect(handle.tools().map((tool) => tool.name)).toEqual(['ops.get_status', 'ops.delete_item', 'ops.restart']);
    expect(handle.tools()[0]).toBe(status);
  });
});
