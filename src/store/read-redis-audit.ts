import type { Logger } from 'pino';
import type { StoredAuditEvent } from '../audit/audit-event.js';
import type { RedisTarget } from '../config/redis-target.js';
import { connectToRedis } from './connect-to-redis.js';
import { createRedisAuditLog } from './redis-audit-log.js';

/**
 * One read of the audit trail for a person at a terminal: connects with short timeouts, reads the
 * window and disconnects, so the CLI needs no Redis client of its own.
 */
export async function readRedisAudit(options: {
  target: RedisTarget;
  keyPrefix: string;
  shards?: number;
  logger: Logger;
  query: { sinceMs: number; untilMs?: number; limit?: number };
}): Promise<StoredAuditEvent[]> {
  const redis = await connectToRedis(options.target);
  try {
    return await createRedisAuditLog({ redis, keyPrefix: options.keyPrefix, ...(options.shards !== undefined && { shards: options.shards }), logger: options.logger }).read(options.query);
  } finally {
    redis.disconnect();
  }
}
