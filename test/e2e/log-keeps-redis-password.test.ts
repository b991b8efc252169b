import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/create-logger.js';
import { connectRedisClient, connectToRedis } from '../../src/store/connect-to-redis.js';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis-server.js';

const PASSWORD = 'WRONG-SECRET-789';

/**
 * ioredis puts the command a reply refused on the error (`err.command = { name, args }`); when
 * Redis refuses the password, that command is `HELLO 3 AUTH default <password>`, and every command
 * waiting on the connection is rejected with that same error. The logger's err serializer copied an
 * error's enumerable fields whole, so a `decision-store-failed` line carried the password.
 */
describe('a Redis error in the log', () => {
  let server: RedisServerHandle | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('never shows the password Redis refused, and still says what failed', async () => {
    server = await startRedisServer({ extraArguments: ['--requirepass', 'the-right-one'] });
    const url = server.url.replace('redis://', `redis://:${PASSWORD}@`);
    let logged = '';
    const destination = new Writable({
      write(chunk, _encoding, done) {
        logged += String(chunk);
        done();
      },
    });
    const logger = createLogger({ level: 'info', destination });

    // The bot's long-running connection (a click's store call) and a one-shot one (`npm run audit`).
    const redis = connectRedisClient({ kind: 'standalone', url });
    try {
      const refused = await redis.get('any').catch((error: unknown) => error);
      logger.error({ event: 'decision-store-failed', stepId: 's1', err: refused }, 'could not record decision');
    } finally {
      redis.disconnect();
    }
    const unreachable = await connectToRedis(url).catch((error: unknown) => error);
    logger.error({ event: 'store-unreachable', err: unreachable }, 'could not connect');

    expect(logged).not.toContain(PASSWORD);
    const lines = logged.trim().split('\n').map((line) => JSON.parse(line) as { err: { message: string } });
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line.err.message).toContain('WRONGPASS');
  });
});
