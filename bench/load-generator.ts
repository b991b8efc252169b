/**
 * Closed-loop HTTP load generator, run as its own child process so its timers are not delayed by
 * the fake Slack / OpenAI servers in the benchmark process. Driven over IPC:
 *   → { type: 'run', id, url, signingSecret, concurrency, requests: [{ contentType, body }] }
 *   ← { type: 'result', id, latenciesMs, sentAtMs, statuses, startedAt, wallMs }
 * Each request is signed the way Slack signs it, just before it is sent. Latency is from the start
 * of the request until the end of the response (Bolt answers when the listener acks).
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

async function run(message: RunMessage): Promise<void> {
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
