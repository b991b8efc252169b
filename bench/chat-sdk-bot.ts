/**
 * The second baseline: a Vercel Chat SDK bot (`chat` + `@chat-adapter/slack`) with Redis state
 * (`@chat-adapter/state-ioredis`), doing the smallest version of countersign's job: a mention posts
 * an approval card, a click on Approve posts the decision in the thread. It has no model, policy,
 * quorum or exactly-once execution, so it is a floor for "a Slack bot with Redis state", not a peer
 * feature for feature. Run as a child process by the benchmark (`node bench/chat-sdk-bot.ts`), so
 * its latency, RSS and CPU are its own. Reads PORT, SLACK_SIGNING_SECRET, SLACK_API_URL, REDIS_URL.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSlackAdapter } from '@chat-adapter/slack';
import { createIoRedisState } from '@chat-adapter/state-ioredis';
import { Actions, Button, Card, CardText, Chat } from 'chat';

const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

const bot = new Chat({
  userName: 'chatsdkbench',
  adapters: {
    slack: createSlackAdapter({
      botToken: 'xoxb-chat-sdk-bench',
      signingSecret: process.env.SLACK_SIGNING_SECRET ?? '',
      ...(process.env.SLACK_API_URL ? { apiUrl: process.env.SLACK_API_URL } : {}),
      logger: silent,
    }),
  },
  state: createIoRedisState({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', keyPrefix: 'chat-sdk-bench', logger: silent }),
  logger: silent,
});

bot.onNewMention(async (thread) => {
  await thread.post(
    Card({
      title: 'Approval needed',
      children: [
        CardText('bench_restart {"service":"worker"}'),
        Actions([Button({ id: 'approve', label: 'Approve', style: 'primary' }), Button({ id: 'deny', label: 'Deny', style: 'danger' })]),
      ],
    }),
  );
});

bot.onAction(['approve', 'deny'], async (event) => {
  await event.thread?.post(`${event.actionId === 'approve' ? 'Approved' : 'Denied'} by <@${event.user.userId}>`);
});

/** Node's request → a web Request for the Chat SDK's handler; background work is awaited nowhere, as on a long-lived server. */
async function handle(incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> {
  if (incoming.method === 'GET' && incoming.url === '/healthz') {
    outgoing.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    return;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) if (typeof value === 'string') headers.set(name, value);
  const request = new Request(`http://127.0.0.1${incoming.url ?? '/'}`, { method: incoming.method, headers, body: Buffer.concat(chunks) });
  const response = await bot.webhooks.slack!(request, { waitUntil: (task: Promise<unknown>) => void task.catch(() => {}) });
  outgoing.writeHead(response.status, Object.fromEntries(response.headers));
  outgoing.end(Buffer.from(await response.arrayBuffer()));
}

await bot.initialize();
const server = createServer((incoming, outgoing) => {
  handle(incoming, outgoing).catch((error: unknown) => {
    process.stderr.write(`chat-sdk bench bot: ${String(error)}\n`);
    if (!outgoing.headersSent) outgoing.writeHead(500).end();
  });
});
server.keepAliveTimeout = 65_000;
await new Promise<void>((resolve) => server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', resolve));
process.stdout.write(`chat-sdk bench bot listening ${(server.address() as AddressInfo).port}\n`);
process.on('SIGTERM', () => {
  server.close();
  bot.shutdown().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
