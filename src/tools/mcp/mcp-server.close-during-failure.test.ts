import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import { createOpsHandle, listenOnLoopback, useClosing } from './http-mcp-fixture.test-support.js';

/**
 * attempt()'s catch waits a setImmediate (for the process exit) before it marks the server unavailable,
 * reports the problem and schedules a retry; a close() landing in that tick was overwritten: the closed
 * handle said 'unavailable' and told onProblem after it was closed.
 */
const closeAfter = useClosing();

describe('close() while a failed connect waits for the exit to be recorded', () => {
  it('stays closed and says nothing after close', async () => {
    const url = await listenOnLoopback(async (_request: IncomingMessage, response: ServerResponse) => void response.writeHead(500).end('down'), closeAfter);
    const problems: string[] = [];
    const handle = createOpsHandle({ url, onProblem: (message) => problems.push(message) });
    // The bot stops exactly while the failed connect waits its setImmediate (the first one the handle asks for).
    let closing: Promise<void> | undefined;
    const original = globalThis.setImmediate;
    const spy = vi.spyOn(globalThis, 'setImmediate').mockImplementation(((callback: (...args: unknown[]) => void, ...args: unknown[]) => {
      if (!closing && new Error().stack?.includes('mcp-connection.ts')) closing = handle.close();
      return original(callback, ...args);
    }) as typeof setImmediate);
    await handle.start();
    spy.mockRestore();
    await closing;
    expect({ closeHappened: closing !== undefined, state: handle.status().state, problemsAfterClose: problems }).toEqual({ closeHappened: true, state: 'closed', problemsAfterClose: [] });
  });
});
