import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.js';
import { parseEnvironment } from './environment.js';
import { createRedisClient } from '../store/connect-to-redis.js';

const HTTP = { SLACK_BOT_TOKEN: 'xoxb-secret-bot-token', SLACK_SIGNING_SECRET: 'signing-secret-value', OPENAI_API_KEY: 'sk-secret-openai-key' };
const noFile = { fileExists: () => false };

/** The problems parseEnvironment reports, or 'accepted'. */
function problemsOf(redisUrl: string) {
  try {
    parseEnvironment({ ...HTTP, REDIS_URL: redisUrl }, noFile);
    return 'accepted';
  } catch (error) {
    if (ConfigError.isInstance(error)) return error.problems;
    throw error;
  }
}

/**
 * README: "Percent-encode special characters in passwords". A password pasted as it is, with a `%`
 * not followed by two hex digits, is refused naming REDIS_URL for the Cluster and Sentinel forms.
 * The one-server form (the commonest: ElastiCache without cluster mode, Azure, Upstash) is accepted,
 * and the bot then fails at start-up with "countersign failed to start: URI malformed", which names
 * neither the variable nor the fix.
 */
describe('REDIS_URL with a stray % in the password', () => {
  it('is refused naming REDIS_URL in the cluster form', () => {
    expect(problemsOf('redis+cluster://:s3cr%t@127.0.0.1:6379')).toEqual([
      { field: 'REDIS_URL', message: 'has a malformed percent-encoding (encode special characters in the password as %XX)' },
    ]);
  });

  it('is refused the same way in the one-server form, instead of crashing the start-up with "URI malformed"', () => {
    const url = 'redis://:s3cr%t@127.0.0.1:6379';
    // What the bot does with it once accepted: ioredis cannot read the URL.
    expect(() => createRedisClient({ kind: 'standalone', url }, { lazyConnect: true })).toThrow('URI malformed');
    expect(problemsOf(url)).toEqual([{ field: 'REDIS_URL', message: 'has a malformed percent-encoding (encode special characters in the password as %XX)' }]);
  });
});
