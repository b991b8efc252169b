import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServerHandle } from '../../test/helpers/redis-server.js';
import { createRedisKeys } from '../store/redis-keys.js';
import { createRedisStore } from '../store/redis-store.js';
import { createRedisAuditLog } from '../store/redis-audit-log.js';
import { runAuditCli } from './run-audit-cli.js';

async function run(argv: string[], env: Record<string, string | undefined>) {
  let stdout = '';
  let stderr = '';
  const exitCode = await runAuditCli({ argv, env, stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) } });
  return { exitCode, stdout, stderr };
}

/**
 * The shard-count marker (`<prefix>shards`) is written once per process, before its first command.
 * A Redis that restarts without its data (no persistence) loses it, and the running bots never write
 * it again: `npm run audit` then falls back to its own shell's COUNTERSIGN_REDIS_SHARDS (16 by default)
 * and prints a shorter trail with exit 0, and a process started with another count is accepted beside
 * the running ones. Both are what the marker exists to prevent.
 */
let redis: RedisServerHandle;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis?.stop();
});

describe('the shard-count marker after Redis restarted empty under running bots', () => {
  it('npm run audit still reads every shard the running 32-shard bot writes to', async () => {
    const keyPrefix = `audit-shards:${randomUUID()}:`;
    const keys = createRedisKeys({ keyPrefix, shards: 32 });
    let channel = '';
    for (let n = 0; ; n += 1) {
      channel = `C${n}`;
      if (keys.ofChannel('T1', channel).index >= 16) break;
    }
    const store = createRedisStore({ url: redis.url, keyPrefix, shards: 32 });
    const log = createRedisAuditLog({ url: redis.url, keyPrefix, shards: 32, logger: pino({ level: 'silent' }) });
    try {
      await store.busyThreads({ limit: 1 });
      await redis.restart();
      // The bot goes on working on the restarted Redis (its store answers again).
      for (;;) {
        try {
          await store.busyThreads({ limit: 1 });
          break;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      await log.append({ type: 'approval-requested', teamId: 'T1', channel, threadTs: '1.1', stepId: 'step-after-restart', approvalId: 'a', toolName: 'deploy', input: {}, requesterId: 'UALICE' });

      const result = await run(['--since', '1h', '--json'], { REDIS_URL: redis.url, COUNTERSIGN_KEY_PREFIX: keyPrefix });
      expect(result.exitCode).toBe(0);
      expect(result.stdout, JSON.stringify(result)).toContain('step-after-restart');
    } finally {
      await log.close();
      await store.close();
    }
  });

  it('a process started with another shard count is refused while the 32-shard bot still runs', async () => {
    const keyPrefix = `audit-shards:${randomUUID()}:`;
    const running = createRedisStore({ url: redis.url, keyPrefix, shards: 32 });
    const late = createRedisStore({ url: redis.url, keyPrefix, shards: 16 });
    try {
      await running.busyThreads({ limit: 1 });
      await redis.restart();
      for (;;) {
        try {
          await running.busyThreads({ limit: 1 });
          break;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      // Before the restart this failed with RedisShardsMismatchError; now it is accepted, and the two
      // processes read and write different keys for the same channels.
      await expect(late.busyThreads({ limit: 1 })).rejects.toThrow(/COUNTERSIGN_REDIS_SHARDS is 16, but this Redis holds data written with 32 shards/);
    } finally {
      await late.close();
      await running.close();
    }
  });
});
