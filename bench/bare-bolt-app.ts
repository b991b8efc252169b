/**
 * The floor for this stack: a Bolt 5 app on the same HTTP receiver as countersign whose listeners
 * only acknowledge. Run as a child process by the benchmark (`node bench/bare-bolt-app.ts`), so
 * its latency, RSS and CPU are its own. Reads PORT, SLACK_SIGNING_SECRET and SLACK_API_URL.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { App, LogLevel } from '@slack/bolt';

const app = new App({
  token: 'xoxb-bare-bench',
  signingSecret: process.env.SLACK_SIGNING_SECRET ?? '',
  botId: process.env.SLACK_BOT_ID ?? 'BBENCH001',
  botUserId: process.env.SLACK_BOT_USER_ID ?? 'UBENCHBOT',
  logLevel: LogLevel.ERROR,
  ...(process.env.SLACK_API_URL ? { clientOptions: { slackApiUrl: process.env.SLACK_API_URL } } : {}),
  customRoutes: [
    {
      path: '/healthz',
      method: ['GET'],
      handler: (_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{"status":"ok"}');
      },
    },
  ],
});

// Events are acknowledged by Bolt before listeners run; the listener exists so the event is routed.
app.event('app_mention', async () => {});
app.action(/.*/, async ({ ack }) => {
  await ack();
});

const server = (await app.start({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' })) as Server;
process.stdout.write(`bare-bolt listening ${(server.address() as AddressInfo).port}\n`);
process.on('SIGTERM', () => {
  app.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
