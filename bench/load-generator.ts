/**
 * HTTP load generator, run as its own child process so its timers are not delayed by the fake
 * Slack / OpenAI servers in the benchmark process. Driven over IPC:
 *   → { type: 'run', id, url, signingSecret, concurrency, ratePerSecond?, requests: [{ contentType, body }] }
 *   ← { type: 'result', id, latenciesMs, sentAtMs, statuses, startedAt, wallMs }
 * Each request is signed the way Slack signs it, just before it is sent. Closed loop (default):
 * `concurrency` lanes each send their next request when the last is answered; latency is from the
 * start of the request to the end of the response. Open loop (`ratePerSecond`): request i is due
 * i/rate seconds after the start whatever happened to the others (at most `concurrency` in flight),
 * and its latency counts from when it was due, so a server that falls behind shows its queue
 * instead of slowing the arrivals down (no coordinated omission).
 */
import { createHmac } from 'node:crypto';
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

interface RunMessage {
  type: 'run';
  id: number;
  url: string;
  signingSecret: string;
  concurrency: number;
  ratePerSecond?: number;
  requests: Array<{ contentType: string; body: string }>;
}

function sign(secret: string, timestamp: number, body: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
}

function send(options: { agent: Agent; url: URL; secret: string; contentType: string; body: string; index: number }): Promise<{ status: number; ms: number; sentAt: number }> {
  return new Promise((resolve) => {
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'content-type': options.contentType,
      'content-length': Buffer.byteLength(options.body),
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-signature': sign(options.secret, timestamp, options.body),
      // Ignored by Bolt; lets a diagnostic hook inside the server match its timings to this request.
      'x-bench-request': String(options.index),
    };
    const started = performance.now();
    const sentAt = started;
    const outgoing = request(
      { agent: options.agent, host: options.url.hostname, port: options.url.port, path: options.url.pathname, method: 'POST', headers },
      (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0, ms: performance.now() - started, sentAt }));
        response.on('error', () => resolve({ status: -1, ms: performance.now() - started, sentAt }));
      },
    );
    outgoing.on('error', () => resolve({ status: -1, ms: performance.now() - started, sentAt }));
    outgoing.end(options.body);
  });
}

/** Open loop: each request is sent when due; its latency counts from then, not from when it went out. */
async function runOpenLoop(message: RunMessage & { ratePerSecond: number }): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: message.concurrency });
  const url = new URL(message.url);
  const count = message.requests.length;
  const latenciesMs = new Array<number>(count).fill(Number.NaN);
  const statuses = new Array<number>(count).fill(0);
  const sentAtMs = new Array<number>(count).fill(Number.NaN);
  const intervalMs = 1000 / message.ratePerSecond;
  const startedAt = Date.now();
  const wallStart = performance.now();
  const inFlight: Array<Promise<void>> = [];
  for (let index = 0; index < count; index += 1) {
    const dueAt = wallStart + index * intervalMs;
    const wait = dueAt - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const item = message.requests[index] as { contentType: string; body: string };
    sentAtMs[index] = dueAt - wallStart;
    inFlight.push(
      send({ agent, url, secret: message.signingSecret, contentType: item.contentType, body: item.body, index }).then((result) => {
        latenciesMs[index] = result.sentAt + result.ms - dueAt;
        statuses[index] = result.status;
      }),
    );
  }
  await Promise.all(inFlight);
  const wallMs = performance.now() - wallStart;
  agent.destroy();
  process.send?.({ type: 'result', id: message.id, latenciesMs, sentAtMs, statuses, startedAt, wallMs });
}

async function run(message: RunMessage): Promise<void> {
  if (message.ratePerSecond !== undefined) return runOpenLoop({ ...message, ratePerSecond: message.ratePerSecond });
  const agent = new Agent({ keepAlive: true, maxSockets: message.concurrency });
  const url = new URL(message.url);
  const latenciesMs = new Array<number>(message.requests.length).fill(Number.NaN);
  const statuses = new Array<number>(message.requests.length).fill(0);
  const sentAtMs = new Array<number>(message.requests.length).fill(Number.NaN);
  let next = 0;
  const startedAt = Date.now();
  const wallStart = performance.now();
  const lane = async () => {
    for (;;) {
      const index = next;
      next += 1;
      const item = message.requests[index];
      if (item === undefined) return;
      const result = await send({ agent, url, secret: message.signingSecret, contentType: item.contentType, body: item.body, index });
      latenciesMs[index] = result.ms;
      sentAtMs[index] = result.sentAt - wallStart;
      statuses[index] = result.status;
    }
  };
  await Promise.all(Array.from({ length: Math.min(message.concurrency, message.requests.length) }, lane));
  const wallMs = performance.now() - wallStart;
  agent.destroy();
  process.send?.({ type: 'result', id: message.id, latenciesMs, sentAtMs, statuses, startedAt, wallMs });
}

process.on('message', (message: RunMessage) => {
  if (message.type === 'run') void run(message);
});
process.on('disconnect', () => process.exit(0));
