/**
 * A minimal Chrome DevTools Protocol client over Node's built-in WebSocket, for a child started
 * with `--inspect=127.0.0.1:0`: forces a full GC and reads the process's own memory numbers, to
 * tell retained state (JS heap after GC) from allocator high-water marks (RSS).
 */
export interface HeapAfterGc {
  heapUsedBytes: number;
  heapTotalBytes: number;
  externalBytes: number;
  arrayBuffersBytes: number;
  rssBytes: number;
}

export function inspectorUrl(output: string): string | undefined {
  return /Debugger listening on (ws:\/\/\S+)/.exec(output)?.[1];
}

/** Connects, runs `work` with a CDP `call` function, disconnects. */
async function withSession<T>(url: string, work: (call: (method: string, params?: object) => Promise<any>) => Promise<T>): Promise<T> {
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve(), { once: true });
    socket.addEventListener('error', () => reject(new Error(`could not connect to ${url}`)), { once: true });
  });
  let sequence = 0;
  const call = (method: string, params: object = {}) =>
    new Promise<any>((resolve, reject) => {
      sequence += 1;
      const id = sequence;
      const onMessage = (event: MessageEvent) => {
        const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
        if (message.id !== id) return;
        socket.removeEventListener('message', onMessage);
        if (message.error) reject(new Error(message.error.message));
        else resolve(message.result);
      };
      socket.addEventListener('message', onMessage);
      socket.send(JSON.stringify({ id, method, params }));
    });
  try {
    return await work(call);
  } finally {
    socket.close();
  }
}

async function evaluate(call: (method: string, params?: object) => Promise<any>, expression: string): Promise<unknown> {
  const result = await call('Runtime.evaluate', { expression, returnByValue: true });
  if (result.exceptionDetails) throw new Error(`inspector evaluation failed: ${JSON.stringify(result.exceptionDetails).slice(0, 300)}`);
  return result.result.value;
}

export function heapAfterGc(url: string): Promise<HeapAfterGc> {
  return withSession(url, async (call) => {
    // Twice: the first pass can leave objects that only become garbage after finalizers run.
    await call('HeapProfiler.collectGarbage');
    await call('HeapProfiler.collectGarbage');
    const usage = JSON.parse((await evaluate(call, 'JSON.stringify(process.memoryUsage())')) as string) as {
      heapUsed: number;
      heapTotal: number;
      external: number;
      arrayBuffers: number;
      rss: number;
    };
    return { heapUsedBytes: usage.heapUsed, heapTotalBytes: usage.heapTotal, externalBytes: usage.external, arrayBuffersBytes: usage.arrayBuffers, rssBytes: usage.rss };
  });
}

export interface EventLoopDelay {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/**
 * Starts (or restarts) an event-loop delay histogram inside the process (perf_hooks, 10 ms
 * resolution). How long the loop was blocked is how long a request that just arrived waits.
 */
export function resetEventLoopDelay(url: string): Promise<void> {
  return withSession(url, async (call) => {
    await evaluate(
      call,
      `(() => {
        if (!globalThis.__benchEventLoopDelay) {
          const { monitorEventLoopDelay } = process.getBuiltinModule('node:perf_hooks');
          globalThis.__benchEventLoopDelay = monitorEventLoopDelay({ resolution: 10 });
          globalThis.__benchEventLoopDelay.enable();
        }
        globalThis.__benchEventLoopDelay.reset();
        return true;
      })()`,
    );
  });
}

export function readEventLoopDelay(url: string): Promise<EventLoopDelay> {
  return withSession(url, async (call) =>
    JSON.parse(
      (await evaluate(
        call,
        `(() => {
          const histogram = globalThis.__benchEventLoopDelay;
          return JSON.stringify({ p50Ms: histogram.percentile(50) / 1e6, p99Ms: histogram.percentile(99) / 1e6, maxMs: histogram.max / 1e6 });
        })()`,
      )) as string,
    ) as EventLoopDelay,
  );
}

/** Server-side timings of one request (epoch ms), keyed by the load generator's `x-bench-request` index. */
export interface ServerRequestTiming {
  /** When the TCP connection was accepted (its first request only). */
  acceptedAt?: number;
  /** When the HTTP server had parsed the request head (`http.server.request.start`). */
  startedAt: number;
  /** When the response was finished (the ack). */
  finishedAt?: number;
}

/**
 * Hooks Node's diagnostics channels inside the process (net.server.socket,
 * http.server.request.start, http.server.response.finish) to record when each benchmark request
 * was accepted, read and answered. Clears what was recorded before.
 */
export function resetRequestTimings(url: string): Promise<void> {
  return withSession(url, async (call) => {
    await evaluate(
      call,
      `(() => {
        if (!globalThis.__benchRequestTimings) {
          const channels = process.getBuiltinModule('node:diagnostics_channel');
          const { performance } = process.getBuiltinModule('node:perf_hooks');
          const now = () => performance.timeOrigin + performance.now();
          const timings = new Map();
          globalThis.__benchRequestTimings = timings;
          channels.subscribe('net.server.socket', ({ socket }) => { socket.__benchAcceptedAt = now(); });
          channels.subscribe('http.server.request.start', ({ request, socket }) => {
            const id = request.headers['x-bench-request'];
            if (id === undefined) return;
            timings.set(id, { acceptedAt: socket.__benchAcceptedAt, startedAt: now() });
            socket.__benchAcceptedAt = undefined;
          });
          channels.subscribe('http.server.response.finish', ({ request }) => {
            const timing = timings.get(request.headers['x-bench-request']);
            if (timing) timing.finishedAt = now();
          });
        }
        globalThis.__benchRequestTimings.clear();
        return true;
      })()`,
    );
  });
}

export function takeRequestTimings(url: string): Promise<Map<number, ServerRequestTiming>> {
  return withSession(url, async (call) => {
    const entries = JSON.parse((await evaluate(call, 'JSON.stringify([...globalThis.__benchRequestTimings])')) as string) as Array<[string, ServerRequestTiming]>;
    return new Map(entries.map(([id, timing]) => [Number(id), timing]));
  });
}
