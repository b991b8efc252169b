import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisCluster, type RedisClusterHandle } from '../helpers/redis-cluster.js';
import { createTestCertificates } from '../helpers/test-certificates.js';
import { freePort, repositoryRoot, startChildBot, stopChildBot, waitUntilListening, type ChildBot } from './child-bot.js';

/**
 * A Redis Cluster that speaks only TLS and admits only an ACL user, as managed clusters do, and the
 * bot started the way the README says: REDIS_URL=rediss+cluster://user:password@…, and the private
 * CA given to Node with NODE_EXTRA_CA_CERTS.
 */
let certificates: ReturnType<typeof createTestCertificates>;
let cluster: RedisClusterHandle;
let bot: ChildBot | undefined;

beforeAll(async () => {
  certificates = createTestCertificates();
  cluster = await startRedisCluster({ tls: certificates });
});

afterAll(async () => {
  if (bot) await stopChildBot(bot);
  await cluster?.stop();
  certificates?.remove();
});

describe('a TLS-only Redis Cluster with an ACL user (REDIS_URL=rediss+cluster://…)', () => {
  it('the bot connects, reports Redis up, and never logs the password', async () => {
    const port = await freePort();
    bot = startChildBot(
      {
        SLACK_BOT_TOKEN: 'xoxb-tls',
        SLACK_SIGNING_SECRET: 'tls-secret',
        SLACK_API_URL: 'http://127.0.0.1:9/api/',
        SLACK_BOT_USER_ID: 'UBOTTLS',
        SLACK_BOT_ID: 'BBOTTLS',
        OPENAI_API_KEY: 'sk-tls',
        REDIS_URL: cluster.url,
        NODE_EXTRA_CA_CERTS: certificates.caFile,
        LOG_LEVEL: 'debug',
        PORT: String(port),
      },
      // `npm test` builds dist/ before the tests run.
      { mainJs: join(repositoryRoot, 'dist/main.js') },
    );
    await waitUntilListening(bot);
    const response = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ redis: 'up' });
    const password = new URL(cluster.url.replace(/,.*$/, '').replace('rediss+cluster', 'http')).password;
    expect(password.length).toBeGreaterThan(10);
    expect(bot.output()).not.toContain(password);
  });
});
