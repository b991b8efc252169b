import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RedisTarget } from '../config/redis-target.js';
import { reconnectDelayMs } from './reconnect-delay.js';

/** How long a person at a terminal waits for a Redis that is not there before being told so. */
const CONNECT_TIMEOUT_MS = 3_000;
const COMMAND_TIMEOUT_MS = 5_000;
const CONNECT_ATTEMPTS = 2;

/** A bot's connection: waits this long for a server, then retries (see `reconnectDelayMs`). */
const SERVICE_CONNECT_TIMEOUT_MS = 5_000;

/**
 * ioredis's options for a target. Standalone URLs go to ioredis as they are (it reads `rediss://`,
 * ACL users and the database from them); Sentinel and Cluster get TLS and credentials on every
 * connection they open: the sentinels, the primary, every cluster node (`redisOptions`).
 */
function connectionOptions(target: Exclude<RedisTarget, { kind: 'standalone' }>, base: RedisOptions): RedisOptions {
  return {
    ...base,
    ...(target.username !== undefined && { username: target.username }),
    ...(target.password !== undefined && { password: target.password }),
    ...(target.tls && { tls: {} }),
  };
}

/**
 * A client for a standalone server, a Sentinel-watched primary or a Cluster, with `base` applied
 * to each connection. `duplicate()` of the result opens the same kind of client again (the store
 * gives blocking pops their own), so every form works wherever one does.
 */
export function createRedisClient(target: RedisTarget, base: RedisOptions, cluster: Partial<ClusterOptions> = {}): Redis | Cluster {
  if (target.kind === 'standalone') return new Redis(target.url, base);
  if (target.kind === 'sentinel') {
    return new Redis({
      ...connectionOptions(target, base),
      sentinels: target.sentinels,
      name: target.name,
      ...(target.db !== undefined && { db: target.db }),
      ...(target.sentinelUsername !== undefined && { sentinelUsername: target.sentinelUsername }),
      ...(target.sentinelPassword !== undefined && { sentinelPassword: target.sentinelPassword }),
      ...(target.tls && { enableTLSForSentinelMode: true, sentinelTLS: {} }),
      // Sentinel announces a failover before the old primary's sockets notice; reconnect at once.
      failoverDetector: true,
    });
  }
  const { retryStrategy: _perNode, ...perNode } = base;
  return new Cluster(target.nodes, {
    ...cluster,
    redisOptions: connectionOptions(target, perNode),
    // Managed clusters (ElastiCache, MemoryDB) present certificates for the configuration endpoint's
    // name, not for each node's resolved address: keep the name for TLS.
    ...(target.tls && { dnsLookup: (address: string, callback: (error: null, address: string) => void) => callback(null, address) }),
  });
}

/** Another client of the same kind and settings: a Cluster's copy finds the same nodes, a Sentinel's the same primary. */
export function duplicateClient(redis: Redis | Cluster): Redis | Cluster {
  return redis instanceof Cluster ? redis.duplicate() : reconnectWhenEndedUnasked(redis.duplicate());
}

/**
 * ioredis ends a client for good when its own connector cuts a connect attempt short: Sentinel's
 * failover detector disconnects the connector when a failover is announced, and if that lands while
 * the client is reconnecting (asking a sentinel for the primary), the attempt fails with "Connection
 * is closed" and the client goes from `connecting` straight to `end` instead of retrying
 * (redis/ioredis#1683). Every later command would fail until the process restarts: seen here as a
 * click after a failover answered "could not record" on a busy machine. A client that ends that way,
 * without `disconnect()` or `quit()` having asked for it, connects again.
 */
function reconnectWhenEndedUnasked(redis: Redis): Redis {
  let previous = redis.status;
  // Backs off like ioredis's own reconnects if the connect keeps failing this way.
  let attempts = 0;
  for (const status of ['connecting', 'connect', 'ready', 'close', 'reconnecting'] as const) redis.on(status, () => (previous = status));
  redis.on('ready', () => (attempts = 0));
  redis.on('end', () => {
    // `manuallyClosing` is what ioredis sets on a disconnect() it was asked for (and keeps when that
    // cut a connect short); an end after `close` is its retry strategy or a quit, never this race.
    const askedFor = () => (redis as unknown as { manuallyClosing?: boolean }).manuallyClosing === true;
    if (previous !== 'connecting' || askedFor()) return;
    setTimeout(() => {
      if (redis.status === 'end' && !askedFor()) redis.connect().catch(() => {});
    }, reconnectDelayMs((attempts += 1))).unref();
  });
  return redis;
}

/**
 * A long-running bot's connection. Fails fast instead of queueing commands forever: a click must
 * hear "could not record" promptly.
 */
export function connectRedisClient(target: RedisTarget | undefined, extra: RedisOptions = {}): Redis | Cluster {
  if (target === undefined) throw new TypeError('a Redis store needs a `redis` client, a `url` or a `target`');
  const redis = createRedisClient(
    target,
    { maxRetriesPerRequest: 2, retryStrategy: reconnectDelayMs, connectTimeout: SERVICE_CONNECT_TIMEOUT_MS, lazyConnect: false, ...extra },
    { clusterRetryStrategy: reconnectDelayMs, retryDelayOnFailover: 100, retryDelayOnClusterDown: 100, retryDelayOnTryAgain: 100 },
  );
  // ioredis emits connection errors as events; without a listener Node would crash the process.
  redis.on('error', () => {});
  return redis instanceof Cluster ? redis : reconnectWhenEndedUnasked(redis);
}

/**
 * A connection for a one-shot command: it fails within seconds instead of retrying forever as a
 * long-running bot would, and the error names the cause (refused, timed out, wrong password).
 */
export async function connectToRedis(target: RedisTarget | string): Promise<Redis | Cluster> {
  let lastError: Error | undefined;
  const redis = createRedisClient(
    typeof target === 'string' ? { kind: 'standalone', url: target } : target,
    {
      lazyConnect: true,
      connectTimeout: CONNECT_TIMEOUT_MS,
      commandTimeout: COMMAND_TIMEOUT_MS,
      maxRetriesPerRequest: 1,
      retryStrategy: (attempt) => (attempt >= CONNECT_ATTEMPTS ? null : 250),
      // ioredis arms this timer on disconnect even for a socket that already failed; the default (2s)
      // would keep the process alive after it has said "unreachable".
      disconnectTimeout: 100,
    },
    { lazyConnect: true, clusterRetryStrategy: (attempt) => (attempt >= CONNECT_ATTEMPTS ? null : 250) },
  );
  // Without a listener ioredis would crash the process; the last error is the useful explanation.
  redis.on('error', (error: Error) => (lastError = error));
  try {
    await redis.connect();
    return redis;
  } catch (error) {
    redis.disconnect();
    // ioredis rejects with a bare "Connection is closed"; the 'error' event had the reason.
    throw lastError ?? error;
  }
}
