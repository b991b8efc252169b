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
type Call = (method: string, params?: object) => Promise<any>;
/** Subscribes to a CDP event (a message with `method` and no `id`); returns the unsubscribe. */
type OnEvent = (method: string, listener: (params: any) => void) => () => void;

async function withSession<T>(url: string, work: (call: Call, on: OnEvent) => Promise<T>): Promise<T> {
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
  const on: OnEvent = (method, listener) => {
    const onMessage = (event: MessageEvent) => {
      const message = JSON.parse(String(event.data)) as { id?: number; method?: string; params?: unknown };
      if (message.id === undefined && message.method === method) listener(message.params);
    };
    socket.addEventListener('message', onMessage);
    return () => socket.removeEventListener('message', onMessage);
  };
  try {
    return await work(call, on);
  } finally {
    socket.close();
  }
}

async function evaluate(call: Call, expression: string): Promise<unknown> {
  const result = await call('Runtime.evaluate', { expression, returnByValue: true });
  if (result.exceptionDetails) throw new Error(`inspector evaluation failed: ${JSON.stringify(result.exceptionDetails).slice(0, 300)}`);
  return result.result.value;
}

interface MemoryUsage {
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  rss: number;
}

const MEMORY_USAGE = 'JSON.stringify(process.memoryUsage())';

/**
 * Full GC in every isolate of the process (its worker threads too: with the Slack front the bot runs
 * on one), then RSS and the JS heaps, summed over the isolates.
 */
export function heapAfterGc(url: string): Promise<HeapAfterGc> {
  return withSession(url, async (call, on) => {
    const workers = await workerSessions(call, on);
    // Twice: the first pass can leave objects that only become garbage after finalizers run.
    for (let pass = 0; pass < 2; pass += 1) {
      await call('HeapProfiler.collectGarbage');
      for (const worker of workers) await worker.call('HeapProfiler.collectGarbage');
    }
    const main = JSON.parse((await evaluate(call, MEMORY_USAGE)) as string) as MemoryUsage;
    const heaps = [main];
    for (const worker of workers) heaps.push(JSON.parse((await evaluate(worker.call, MEMORY_USAGE)) as string) as MemoryUsage);
    const sum = (pick: (usage: MemoryUsage) => number) => heaps.reduce((total, usage) => total + pick(usage), 0);
    // RSS is the process's, the same from any isolate, and every collection came before it was read.
    return { heapUsedBytes: sum((usage) => usage.heapUsed), heapTotalBytes: sum((usage) => usage.heapTotal), externalBytes: sum((usage) => usage.external), arrayBuffersBytes: sum((usage) => usage.arrayBuffers), rssBytes: main.rss };
  });
}

/** A CDP `call` into each worker thread of the process, through the NodeWorker domain. */
async function workerSessions(call: Call, on: OnEvent): Promise<Array<{ call: Call }>> {
  const sessionIds: string[] = [];
  const stopAttached = on('NodeWorker.attachedToWorker', (params: { sessionId: string }) => sessionIds.push(params.sessionId));
  // Already running workers are reported (attachedToWorker) before enable answers.
  await call('NodeWorker.enable', { waitForDebuggerOnStart: false });
  stopAttached();
  let sequence = 0;
  return sessionIds.map((sessionId) => ({
    call: (method: string, params: object = {}) =>
      new Promise<any>((resolve, reject) => {
        sequence += 1;
        const id = sequence;
        const stop = on('NodeWorker.receivedMessageFromWorker', (event: { sessionId: string; message: string }) => {
          if (event.sessionId !== sessionId) return;
          const message = JSON.parse(event.message) as { id?: number; result?: unknown; error?: { message: string } };
          if (message.id !== id) return;
          stop();
          if (message.error) reject(new Error(message.error.message));
          else resolve(message.result);
        });
        call('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id, method, params }) }).catch(reject);
      }),
  }));
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

/**
 * Samples allocations in every worker thread of the process (the bot thread) while `during` runs,
 * garbage included (V8's sampling heap profiler otherwise keeps only what is still alive): where the
 * young generation fills from. Returns one `.heapprofile` (DevTools' format) per worker.
 */
export function sampleAllocations(url: string, during: () => Promise<void>): Promise<unknown[]> {
  return withSession(url, async (call, on) => {
    const workers = await workerSessions(call, on);
    for (const worker of workers) {
      await worker.call('HeapProfiler.enable');
      await worker.call('HeapProfiler.startSampling', { samplingInterval: 8192, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    }
    await during();
    const profiles: unknown[] = [];
    for (const worker of workers) profiles.push((await worker.call('HeapProfiler.stopSampling')).profile);
    return profiles;
  });
}
