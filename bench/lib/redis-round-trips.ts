import { Redis } from 'ioredis';
import type { BenchContext } from './bench-context.js';
import { approver } from './click-requests.js';
import { redisAccounting } from './redis-accounting.js';
import { startCountingProxy } from './redis-proxy.js';
import type { RedisAccounting } from './results.js';
import type { BenchScale } from './scale.js';
import { createThreadFactory } from './workload.js';

/**
 * Redis commands and round trips per turn and per click, counted on a second bot whose Redis
 * connection goes through a counting proxy to a Redis of its own: only its own traffic is counted,
 * and the proxy's delay never reaches the bot whose latency is measured.
 */
export async function measureRedisRoundTrips(options: { context: BenchContext; scale: BenchScale }): Promise<RedisAccounting> {
  const { context } = options;
  const proxy = await startCountingProxy({ host: '127.0.0.1', port: context.accountingRedis.port }, { clientWrites: true });
  context.cleanup.push(() => proxy.close());
  const accountedBot = await context.startBot({ name: 'countersign-accounting', redisUrl: proxy.url, redisWrites: { reportPort: proxy.reportPort as number, redisPort: proxy.port } });
  const accountingInspector = new Redis(context.accountingRedis.url);
  context.cleanup.push(() => accountingInspector.quit());
  const result = await redisAccounting({
    scale: options.scale,
    proxy,
    inspector: accountingInspector,
    observer: context.observer,
    // Threads of their own ('A'), apart from the measured bot's.
    newThreads: createThreadFactory('A'),
    sendOne: (request) => context.send({ url: accountedBot.eventsUrl, concurrency: 1, requests: [request] }),
    approver,
  });
  await accountedBot.handle.stop();
  return result;
}
