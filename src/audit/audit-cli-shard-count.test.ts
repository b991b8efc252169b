import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { describe, expect, inject, it } from 'vitest';
import { connectToRedis } from '../store/connect-to-redis.js';
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
 * The bot runs with COUNTERSIGN_REDIS_SHARDS=32 (the store records that count in `<prefix>shards`
 * and refuses to start a process with another one). `npm run audit` run without the variable (or
 * with another value) read only the first 16 shards' streams and printed a shorter trail, exit 0,
 * with no word that it read the wrong layout: an incident review missed the channels in shards 16-31.
 */
describe('npm run audit against a bot with a non-default shard count', () => {
  /** A 32-shard bot's keyspace with one event in a shard of 16..31, which a 16-shard reader never reads. */
  async function botWith32Shards() {
    const keyPrefix = `audit-shards:${randomUUID()}:`;
    const url = inject('redisUrl');
    const keys = createRedisKeys({ keyPrefix, shards: 32 });
    let channel = '';
    for (let n = 0; ; n += 1) {
      channel = `C${n}`;
      if (keys.ofChannel('T1', channel).index >= 16) break;
    }
    // The bot's store lays out the keyspace (records the shard count), as a running bot does.
    const store = createRedisStore({ url, keyPrefix, shards: 32 });
    await store.busyThreads({ limit: 1 });
    const log = createRedisAuditLog({ url, keyPrefix, shards: 32, logger: pino({ level: 'silent' }) });
    await log.append({ type: 'approval-requested', teamId: 'T1', channel, threadTs: '1.1', stepId: 'step-prod-deploy', approvalId: 'a', toolName: 'deploy', input: {}, requesterId: 'UALICE' });
    await log.close();
    await store.close();
    return { url, keyPrefix };
  }

  it('reads the shard count the data was written with when COUNTERSIGN_REDIS_SHARDS is not set', async () => {
    const { url, keyPrefix } = await botWith32Shards();
    const result = await run(['--since', '1h', '--json'], { REDIS_URL: url, COUNTERSIGN_KEY_PREFIX: keyPrefix });
    expect(result, JSON.stringify(result)).toMatchObject({ exitCode: 0, stderr: '' });
    expect(result.stdout).toContain('step-prod-deploy');
  });

  it('reads the whole trail when COUNTERSIGN_REDIS_SHARDS is the bot’s', async () => {
    const { url, keyPrefix } = await botWith32Shards();
    const result = await run(['--since', '1h', '--json'], { REDIS_URL: url, COUNTERSIGN_KEY_PREFIX: keyPrefix, COUNTERSIGN_REDIS_SHARDS: '32' });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('step-prod-deploy');
  });

  it('refuses a COUNTERSIGN_REDIS_SHARDS other than the data’s, naming both counts', async () => {
    const { url, keyPrefix } = await botWith32Shards();
    const result = await run(['--since', '1h', '--json'], { REDIS_URL: url, COUNTERSIGN_KEY_PREFIX: keyPrefix, COUNTERSIGN_REDIS_SHARDS: '16' });
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('COUNTERSIGN_REDIS_SHARDS is 16, but this Redis holds data written with 32 shards');
    expect(result.stderr).not.toContain('Check that Redis is running');
  });

  it('refuses to guess a count when the recorded one is gone but the data is there, and reads with the one it is given', async () => {
    const { url, keyPrefix } = await botWith32Shards();
    // Redis lost the marker (an eviction, a restart that kept some data) and no bot wrote it again yet.
    const redis = await connectToRedis(url);
    await redis.del(createRedisKeys({ keyPrefix }).shardCountMarker());
    redis.disconnect();
    const guessed = await run(['--since', '1h', '--json'], { REDIS_URL: url, COUNTERSIGN_KEY_PREFIX: keyPrefix });
    expect(guessed.exitCode).toBe(1);
    expect(guessed.stdout).toBe('');
    expect(guessed.stderr).toContain(`not the shard count it was written with (${keyPrefix}shards)`);
    expect(guessed.stderr).toContain("Set COUNTERSIGN_REDIS_SHARDS to the bot's count");
    const told = await run(['--since', '1h', '--json'], { REDIS_URL: url, COUNTERSIGN_KEY_PREFIX: keyPrefix, COUNTERSIGN_REDIS_SHARDS: '32' });
    expect(told.exitCode).toBe(0);
    expect(told.stdout).toContain('step-prod-deploy');
  });

  it('reads an empty trail as empty where nothing was ever written, with no count recorded', async () => {
    const result = await run(['--since', '1h', '--json'], { REDIS_URL: inject('redisUrl'), COUNTERSIGN_KEY_PREFIX: `audit-shards:${randomUUID()}:` });
    expect(result).toEqual({ exitCode: 0, stdout: '', stderr: '' });
  });
});
