import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { API_TOKEN, newFilesystemRoot, startFakeApi, toolSourcesYaml, type FakeApi } from '../../../test/fixtures/tool-source-fixtures.js';
import { parseConfigFile } from '../../config/config-file.js';
import { loadTools, type LoadedTools } from '../load-tools.js';
import type { ToolDefinition } from '../tool-definition.js';
import { StdioTransport } from './stdio-transport.js';

/**
 * A tool source must never take the bot down: a slow stdio MCP server (it answers every request
 * after 1.1 s, so a 1 s protocol-discovery probe gives up and its late "Method not found" arrives
 * for an id the client no longer knows) and one that writes garbage between its answers, loaded
 * together with `http_request` and the filesystem MCP server. Before the fix the late answer threw
 * inside the transport's stdout handler: an uncaught exception that ends the process.
 */
const FIXTURE = join(import.meta.dirname, '../../../test/fixtures/mcp-stdio-server.mjs');
const context = { requesterId: 'UALICE', teamId: 'T1', channel: 'C1', threadTs: '1.1', toolCallId: 'call_1', idempotencyKey: 'k1' };

/** Everything that would have ended the bot process (vitest's own handlers keep the worker alive). */
let uncaught: unknown[] = [];
const recordUncaught = (error: unknown) => uncaught.push(error);
beforeEach(() => {
  uncaught = [];
  process.on('uncaughtException', recordUncaught);
  process.on('unhandledRejection', recordUncaught);
});
afterEach(() => {
  process.off('uncaughtException', recordUncaught);
  process.off('unhandledRejection', recordUncaught);
});

const closing: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (closing.length > 0) await closing.pop()?.close();
});

interface LogLine {
  level: number;
  event?: string;
  mcpServer?: string;
  err?: string;
  msg: string;
}

function capturingLogger(): { logger: pino.Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as LogLine);
      callback();
    },
  });
  return { logger: pino({ level: 'debug' }, destination), lines };
}

function fixtureServer(name: string, flags: string[], more = ''): string {
  return `  ${name}:\n    command: ${JSON.stringify(process.execPath)}\n    args: ${JSON.stringify([FIXTURE, ...flags])}\n${more.replace(/^/gm, '    ')}\n`;
}

async function run(tools: LoadedTools, name: string, input: Record<string, unknown>): Promise<unknown> {
  const tool: ToolDefinition | undefined = tools.find(name);
  if (!tool) throw new Error(`no tool ${name}; tools: ${tools.tools.map((candidate) => candidate.name).join(', ')}`);
  return (tool as ToolDefinition<Record<string, unknown>, unknown>).execute!(input, context);
}

describe('unruly stdio MCP servers', () => {
  let api: FakeApi;
  beforeEach(async () => {
    api = await startFakeApi();
    closing.push(api);
  });

  it('a slow server and a garbage-writing server load next to other sources; nothing crashes and every tool works', { timeout: 60_000 }, async () => {
    const root = newFilesystemRoot();
    const { logger, lines } = capturingLogger();
    const base = toolSourcesYaml({ apiOrigin: api.origin, root });
    const yaml = `${base}${fixtureServer('slow', ['--delay', '1100'], 'connectTimeoutSeconds: 15\ntimeoutSeconds: 10')}${fixtureServer('junk', ['--garbage'], 'connectTimeoutSeconds: 10\ntimeoutSeconds: 5')}`;
    const problems: string[] = [];
    const tools = await loadTools({
      config: parseConfigFile(yaml, 'unruly.yml'),
      logger,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, E2E_API_TOKEN: API_TOKEN },
      onSourceProblem: (problem) => problems.push(problem.message),
    });
    closing.push(tools);

    // Nothing escaped to the process (before the fix: "unknown message ID" thrown in a stream handler).
    expect(uncaught).toEqual([]);
    // Every source connected: the slow one too, and the garbage did not stop the junk one.
    expect(problems).toEqual([]);
    expect(tools.status().map((status) => [status.source, status.state])).toEqual([
      ['builtin', 'ready'],
      ['http', 'ready'],
      ['mcp:fs', 'ready'],
      ['mcp:slow', 'ready'],
      ['mcp:junk', 'ready'],
    ]);
    expect(tools.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['http_request', 'fs.read_text_file', 'slow.echo', 'junk.echo']));

    // The misbehaving servers' tools work, one call after another (a stranded answer would hang).
    await expect(run(tools, 'slow.echo', { text: 'late but fine' })).resolves.toEqual({ text: 'echo: late but fine', truncated: false });
    for (const text of ['one', 'two', 'three']) await expect(run(tools, 'junk.echo', { text })).resolves.toEqual({ text: `echo: ${text}`, truncated: false });
    await expect(Promise.all([run(tools, 'junk.echo', { text: 'a' }), run(tools, 'junk.echo', { text: 'b' })])).resolves.toEqual([
      { text: 'echo: a', truncated: false },
      { text: 'echo: b', truncated: false },
    ]);

    // The other sources keep working, also while a slow call and garbage are in flight.
    const notes = join(root, 'notes.txt');
    writeFileSync(notes, 'still here');
    const [slow, junkCall, http, file] = await Promise.all([
      run(tools, 'slow.echo', { text: 'slow again' }),
      run(tools, 'junk.echo', { text: 'junk again' }),
      run(tools, 'http_request', { method: 'GET', url: `${api.origin}/api/health` }),
      run(tools, 'fs.read_text_file', { path: notes }),
    ]);
    expect(slow).toEqual({ text: 'echo: slow again', truncated: false });
    expect(junkCall).toEqual({ text: 'echo: junk again', truncated: false });
    expect(http).toMatchObject({ status: 200 });
    expect(file).toEqual({ text: 'still here', truncated: false });
    expect(readFileSync(notes, 'utf8')).toBe('still here');

    // Nothing escaped to the process, and every source is still up.
    expect(uncaught).toEqual([]);
    expect(tools.status().every((status) => status.state === 'ready')).toBe(true);

    // The garbage was logged (and skipped); the slow server caused no protocol error at all: the
    // client waited for its discovery answer instead of giving up after 1 s.
    const transportErrors = (server: string) => lines.filter((line) => line.mcpServer === server && line.event === 'mcp-transport-error');
    expect(transportErrors('slow')).toEqual([]);
    const junk = transportErrors('junk').map((line) => line.err ?? '');
    expect(junk.some((message) => message.includes('not JSON-RPC') && message.includes('this is not JSON at all'))).toBe(true);
    expect(junk.some((message) => message.includes('unknown message ID'))).toBe(true);
  });

  it('falls back to initialize when a server never answers protocol discovery, within the connect timeout', { timeout: 30_000 }, async () => {
    const { logger } = capturingLogger();
    // A 4 s budget: discovery is given up after 2 s, and the server has the other 2 to initialize.
    const tools = await loadTools({
      config: parseConfigFile(`mcpServers:\n${fixtureServer('quiet', ['--ignore-unknown'], 'connectTimeoutSeconds: 4')}`, 'quiet.yml'),
      logger,
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
    });
    closing.push(tools);
    expect(tools.status().find((status) => status.source === 'mcp:quiet')).toMatchObject({ state: 'ready', tools: ['quiet.echo'] });
    await expect(run(tools, 'quiet.echo', { text: 'hi' })).resolves.toEqual({ text: 'echo: hi', truncated: false });
    expect(uncaught).toEqual([]);
  });
});

describe('StdioTransport', () => {
  /** A child that writes `text` to stdout, then waits for stdin to close. */
  function transportWriting(text: string | string[], options: { maxLineLength?: number } = {}) {
    const messages: unknown[] = [];
    const errors: string[] = [];
    // Several pieces are written one per timer tick, so they arrive as separate chunks.
    const pieces = typeof text === 'string' ? [text] : text;
    const script = `const pieces = ${JSON.stringify(pieces)}; const next = () => { if (pieces.length > 0) process.stdout.write(pieces.shift(), () => setTimeout(next, 20)); }; next(); process.stdin.resume(); process.stdin.on('end', () => process.exit(0));`;
    const transport = new StdioTransport({
      command: process.execPath,
      args: ['-e', script],
      env: { PATH: process.env.PATH ?? '' },
      onTransportError: (error) => errors.push(error.message),
      ...options,
    });
    transport.onmessage = (message) => messages.push(message);
    closing.push(transport);
    return { transport, messages, errors };
  }

  async function until(probe: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!probe()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  const valid = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, result: { n: id } });

  it('reports and skips lines that are not JSON-RPC, and delivers the valid lines around them', async () => {
    const text = [valid(1), 'not json', '{"hello":"world"}', '42', valid(2), '{"jsonrpc":"2.0","id":3,"res', valid(3)].join('\n') + '\n';
    const { transport, messages, errors } = transportWriting(text);
    await transport.start();
    await until(() => messages.length === 3, 'three valid messages');
    expect(messages).toEqual([1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, result: { n: id } })));
    expect(errors).toHaveLength(4);
    expect(errors[0]).toMatch(/not JSON-RPC.*: not json$/);
  });

  it('keeps going when the client throws for a message, and reports the error instead of crashing', async () => {
    const { transport, errors } = transportWriting([valid(1), valid(2), valid(3)].join('\n') + '\n');
    const seen: number[] = [];
    transport.onmessage = (message) => {
      const id = (message as { id: number }).id;
      seen.push(id);
      if (id === 2) throw new Error('Protocol error: Received a response for an unknown message ID');
    };
    await transport.start();
    await until(() => seen.length === 3, 'all three messages');
    expect(seen).toEqual([1, 2, 3]);
    expect(errors).toEqual([expect.stringMatching(/unknown message ID/)]);
    expect(uncaught).toEqual([]);
  });

  it('drops a line longer than the limit without buffering it, and goes on after its end', async () => {
    const { transport, messages, errors } = transportWriting(`${'x'.repeat(5000)}\n${valid(7)}\n`, { maxLineLength: 1000 });
    await transport.start();
    await until(() => messages.length === 1, 'the message after the long line');
    expect(messages).toEqual([{ jsonrpc: '2.0', id: 7, result: { n: 7 } }]);
    expect(errors).toEqual([expect.stringMatching(/longer than 1000 characters/)]);
  });

  it('drops a long line that arrives in many chunks, reporting it once, and reads the next line whole', async () => {
    const { transport, messages, errors } = transportWriting([valid(1).slice(0, 10), `${valid(1).slice(10)}\n${'x'.repeat(600)}`, 'x'.repeat(600), 'x'.repeat(600), `x\n${valid(2)}\n`], { maxLineLength: 1000 });
    await transport.start();
    await until(() => messages.length === 2, 'the messages around the long line');
    expect(messages).toEqual([1, 2].map((id) => ({ jsonrpc: '2.0', id, result: { n: id } })));
    expect(errors).toEqual([expect.stringMatching(/longer than 1000 characters/)]);
  });
});
