import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRedactor, type Redactor } from '../http/redact.js';
import { StdioTransport, type ProcessExit } from './stdio-transport.js';

const closing: StdioTransport[] = [];
afterEach(async () => {
  while (closing.length > 0) await closing.pop()?.close();
});

/** A server process running `script`, its stderr lines collected; stdout lines that are not JSON-RPC are counted. */
async function serverWith(script: string, redact?: Redactor) {
  const lines: string[] = [];
  const transportErrors: string[] = [];
  const transport = new StdioTransport({
    command: process.execPath,
    args: ['-e', script],
    env: { PATH: process.env.PATH ?? '' },
    onStderr: (line) => lines.push(line),
    onTransportError: (error) => transportErrors.push(error.message),
    ...(redact ? { redact } : {}),
  });
  closing.push(transport);
  await transport.start();
  return { transport, lines, transportErrors, wroteToStdout: () => transportErrors.length > 0 };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** What the transport holds of an unfinished stderr line. */
const heldOf = (transport: StdioTransport) => (transport as unknown as { stderrLine: string }).stderrLine.length;

describe('stderr of a stdio MCP server', () => {
  it('takes each \\r of a progress bar as a line end, so its updates are lines and nothing piles up', { timeout: 90_000 }, async () => {
    // 16 MiB of progress updates, "\r"-separated as progress bars are, never a "\n"; then "done" on stdout, and it stays up.
    const script = `const chunk = ('downloading… 42%\\r').repeat(4096); let left = 256; const next = () => { if (left-- > 0) process.stderr.write(chunk, next); else process.stdout.write('done\\n'); }; next(); process.stdin.resume();`;
    const server = await serverWith(script);
    await until(server.wroteToStdout, '"done" on stdout');
    // Before: the whole 16 MiB (17825792 characters) was held as one unfinished line, and every chunk re-split all of it.
    expect(heldOf(server.transport)).toBeLessThan(5000);
    await until(() => server.lines.length === 4096 * 256, 'every update as a line');
    expect(new Set(server.lines)).toEqual(new Set(['downloading… 42%']));
  });

  it('keeps only the start of a line that does not end, and goes on with the next line', { timeout: 90_000 }, async () => {
    // 16 MiB without a line end; "done" on stdout; on any input from the bot, the line's end and one more line.
    const script = `const chunk = 'x'.repeat(65536); let left = 256; const next = () => { if (left-- > 0) process.stderr.write(chunk, next); else process.stdout.write('done\\n'); }; next(); process.stdin.once('data', () => process.stderr.write('\\nafter\\n'));`;
    const server = await serverWith(script);
    await until(server.wroteToStdout, '"done" on stdout');
    expect(heldOf(server.transport)).toBeLessThan(5000);
    await server.transport.send({ jsonrpc: '2.0', method: 'notifications/continue' });
    await until(() => server.lines.includes('after'), 'the next line');
    expect(server.lines).toEqual([`${'x'.repeat(4096)}…`, 'after']);
  });
});

describe('secrets in what a stdio MCP server writes', () => {
  const secret = 'ghp_S3cretTokenValue0123456789abcdefXYZ';

  it('are redacted before a stderr line that does not end is cut: the cut leaves none of the secret', async () => {
    // The secret starts 20 characters before the cap, and the line goes on for 64 KiB more.
    const script = `process.stderr.write('y'.repeat(4076) + '${secret}' + 'z'.repeat(65536) + '\\n'); process.stdin.resume();`;
    const server = await serverWith(script, createRedactor([secret]));
    await until(() => server.lines.length > 0, 'the line');
    expect(server.lines).toEqual([`${'y'.repeat(4076)}[redacted]…`]);
  });

  it('are redacted before the report of a stdout line that is not JSON-RPC quotes its start', async () => {
    const script = `process.stdout.write('${secret}'.padStart(220, '.') + ' more\\n'); process.stdin.resume();`;
    const server = await serverWith(script, createRedactor([secret]));
    await until(server.wroteToStdout, 'the report');
    expect(server.transportErrors).toEqual([`the MCP server wrote something that is not JSON-RPC on stdout; skipped: ${'.'.repeat(181)}[redacted]…`]);
  });
});

describe('a stdio MCP server that exits while a process it started holds its pipes', () => {
  it('is reported gone without waiting for the pipes, after its last lines were read', { timeout: 10_000 }, async () => {
    // The helper inherits the server's stdio (Node's `stdio: 'inherit'`): the pipes stay open after the server exits.
    const script = `const helper = require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 60000)'], { stdio: 'inherit' });
process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { helper: helper.pid } }) + '\\n');
process.stderr.write('giving up: no database\\n');
process.exit(3);`;
    const messages: { params?: { helper?: number } }[] = [];
    let exited: ProcessExit | undefined;
    const transport = new StdioTransport({ command: process.execPath, args: ['-e', script], env: { PATH: process.env.PATH ?? '' }, onExit: (exit) => (exited = exit) });
    transport.onmessage = (message) => messages.push(message as { params?: { helper?: number } });
    closing.push(transport);
    await transport.start();
    try {
      // Bounded well within the test's timeout, so that the helper is killed below even when it fails.
      await vi.waitFor(() => expect(exited).toBeDefined(), { timeout: 5000, interval: 20 });
      expect(exited).toMatchObject({ code: 3, signal: null, stderrTail: 'giving up: no database', expected: false });
      expect(messages).toEqual([expect.objectContaining({ method: 'notifications/message' })]);
    } finally {
      const helper = messages[0]?.params?.helper;
      if (helper !== undefined) {
        try {
          process.kill(helper, 'SIGKILL');
        } catch {}
      }
    }
  });
});

describe('a stdio MCP server that exits on its own', () => {
  it('is not taken for one the bot stopped when the bot closes it while its last output drains', async () => {
    // A server that fails at start-up: the bot's first write meets a closed pipe (EPIPE) and the
    // connect gives up and closes the transport while the exit's drain still runs. The operator must
    // still be told how the server exited and what it printed, not "write EPIPE".
    const { transport } = await serverWith(`process.stderr.write('missing API_URL\\n'); setTimeout(() => process.exit(3), 50);`);
    const child = (transport as unknown as { child: import('node:child_process').ChildProcess }).child;
    // Right at the exit, before the pipes are seen to close: where a failed first write lands.
    const closed = new Promise<void>((resolve) => child.once('exit', () => resolve(transport.close())));
    await closed;
    expect(transport.exit).toEqual({ code: 3, signal: null, stderrTail: 'missing API_URL', expected: false });
  });
});

describe('a stdio MCP server whose input is gone before the bot gives up on it', () => {
  it('is reported by its own exit even when the failed write comes before the exit is seen', async () => {
    // On a loaded machine the bot's write can meet EPIPE, and the connect close the transport,
    // before the exit event is handled: played here in that order, ahead of the transport's handler.
    const { transport } = await serverWith(`process.stderr.write('missing API_URL\\n'); setTimeout(() => process.exit(3), 50);`);
    const child = (transport as unknown as { child: import('node:child_process').ChildProcess }).child;
    const closed = new Promise<void>((resolve) =>
      child.prependOnceListener('exit', () => {
        child.stdin?.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
        resolve(transport.close());
      }),
    );
    await closed;
    expect(transport.exit).toEqual({ code: 3, signal: null, stderrTail: 'missing API_URL', expected: false });
  });
});

describe('the process group guard', () => {
  it('is told the server\'s group as it is spawned, and the server runs and is used only once the guard holds it', async () => {
    let hold = () => {};
    const held = new Promise<boolean>((resolve) => {
      hold = () => resolve(true);
    });
    const watched: number[] = [];
    const transportErrors: string[] = [];
    const transport = new StdioTransport({
      command: process.execPath,
      args: ['-e', 'console.log("up"); setInterval(() => {}, 60000)'],
      env: { PATH: process.env.PATH ?? '' },
      onTransportError: (error) => transportErrors.push(error.message),
      processGroups: {
        watch: (pid) => {
          watched.push(pid);
          return held;
        },
        unwatch: () => {},
      },
    });
    closing.push(transport);
    let started = false;
    const start = transport.start().then(() => {
      started = true;
    });
    // In the same run of code as the spawn: no moment where the bot could die with the group unknown.
    expect(watched).toEqual([transport.pid]);

    // Held: the process is there (its group known) but it is the stand-in waiting to be let go, not
    // the server, which must not run unwatched.
    if (process.platform === 'linux') {
      await until(() => /^State:\s+S/m.test(readFileSync(`/proc/${transport.pid}/status`, 'utf8')), 'the held process to wait');
      expect(readFileSync(`/proc/${transport.pid}/cmdline`, 'utf8').split('\0')[0]).toBe('/bin/sh');
    }
    expect(started).toBe(false);
    expect(transportErrors).toEqual([]);
    hold();
    await start;
    // The server runs, with the same pid (its group), and wrote (not JSON-RPC).
    await until(() => transportErrors.length > 0, 'the server to write');
    expect(watched).toEqual([transport.pid]);
  });

  it('does not start the server when no watchdog holds its group, and says so', async () => {
    const ran = join(mkdtempSync(join(tmpdir(), 'countersign-stdio-')), 'ran');
    const transport = new StdioTransport({
      command: process.execPath,
      args: ['-e', `require('node:fs').writeFileSync(${JSON.stringify(ran)}, 'ran'); setInterval(() => {}, 60000)`],
      env: { PATH: process.env.PATH ?? '' },
      processGroups: { watch: () => Promise.resolve(false), unwatch: () => {} },
    });
    closing.push(transport);

    await expect(transport.start()).rejects.toThrow(`could not start ${process.execPath}: the process-group watchdog is not running, so it was not started`);
    await until(() => transport.exit !== undefined, 'the held process to go');
    expect(existsSync(ran)).toBe(false);
  });
});
