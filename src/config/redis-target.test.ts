import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.js';
import { describeEnvironment, parseEnvironment } from './environment.js';
import { parseRedisTarget } from './redis-target.js';

const HTTP = { SLACK_BOT_TOKEN: 'xoxb-secret-bot-token', SLACK_SIGNING_SECRET: 'signing-secret-value', OPENAI_API_KEY: 'sk-secret-openai-key' };
const noFile = { fileExists: () => false };

function problemsOf(env: Record<string, string>) {
  try {
    parseEnvironment({ ...HTTP, ...env }, noFile);
  } catch (error) {
    if (ConfigError.isInstance(error)) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('REDIS_URL forms', () => {
  it('keeps a single server URL as it is (TLS, ACL user and database are ioredis’s to read)', () => {
    expect(parseRedisTarget('rediss://bot:s3cret@cache.example:6380/2')).toEqual({ kind: 'standalone', url: 'rediss://bot:s3cret@cache.example:6380/2' });
  });

  it('reads a cluster: seed nodes, TLS, ACL user and password (percent-decoded)', () => {
    expect(parseRedisTarget('rediss+cluster://bot:p%40ss@node-1.example:7000,node-2.example,[::1]:7002')).toEqual({
      kind: 'cluster',
      nodes: [
        { host: 'node-1.example', port: 7000 },
        { host: 'node-2.example', port: 6379 },
        { host: '::1', port: 7002 },
      ],
      tls: true,
      username: 'bot',
      password: 'p@ss',
    });
    expect(parseRedisTarget('redis+cluster://:only-password@10.0.0.1:7000')).toEqual({ kind: 'cluster', nodes: [{ host: '10.0.0.1', port: 7000 }], tls: false, password: 'only-password' });
  });

  it('reads a sentinel deployment: sentinels, primary name, database and the sentinels’ own credentials', () => {
    expect(parseRedisTarget('rediss+sentinel://bot:pw@s1:26380,s2/mymaster/3?sentinelUsername=watch&sentinelPassword=spw')).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: 's1', port: 26380 },
        { host: 's2', port: 26379 },
      ],
      name: 'mymaster',
      db: 3,
      tls: true,
      username: 'bot',
      password: 'pw',
      sentinelUsername: 'watch',
      sentinelPassword: 'spw',
    });
  });

  it('names REDIS_URL in every problem and never repeats the value (it holds the password)', () => {
    const cases = ['http://x', 'redis+cluster://h:99999', 'redis+cluster://h:7000/1', 'redis+sentinel://h:26379', 'redis+sentinel://h/mymaster?tls=1', 'redis+cluster://u:%zz@h'];
    for (const value of cases) {
      const problems = problemsOf({ REDIS_URL: value });
      expect(problems.map((problem) => problem.field)).toEqual(['REDIS_URL']);
      expect(JSON.stringify(problems)).not.toContain(value);
    }
  });

  it('reads COUNTERSIGN_REDIS_SHARDS, naming it when out of range', () => {
    expect(parseEnvironment({ ...HTTP, REDIS_URL: 'redis://localhost', COUNTERSIGN_REDIS_SHARDS: '64' }, noFile).redisShards).toBe(64);
    expect(problemsOf({ COUNTERSIGN_REDIS_SHARDS: '0' })).toEqual([{ field: 'COUNTERSIGN_REDIS_SHARDS', message: expect.stringContaining('from 1 to 1024') }]);
    expect(problemsOf({ COUNTERSIGN_REDIS_SHARDS: '1.5' }).map((problem) => problem.field)).toEqual(['COUNTERSIGN_REDIS_SHARDS']);
  });

  it('reads COUNTERSIGN_REDIS_WAIT_REPLICAS and COUNTERSIGN_REDIS_WAIT_TIMEOUT_MS, leaving the default to the store when unset, naming a bad one', () => {
    const read = (env: Record<string, string>) => {
      const { redisWaitReplicas, redisWaitTimeoutMs } = parseEnvironment({ ...HTTP, REDIS_URL: 'redis+sentinel://h/mymaster', ...env }, noFile);
      return { redisWaitReplicas, redisWaitTimeoutMs };
    };
    expect(read({})).toEqual({ redisWaitReplicas: undefined, redisWaitTimeoutMs: undefined });
    expect(read({ COUNTERSIGN_REDIS_WAIT_REPLICAS: '0' })).toEqual({ redisWaitReplicas: 0, redisWaitTimeoutMs: undefined });
    expect(read({ COUNTERSIGN_REDIS_WAIT_REPLICAS: '2', COUNTERSIGN_REDIS_WAIT_TIMEOUT_MS: '250' })).toEqual({ redisWaitReplicas: 2, redisWaitTimeoutMs: 250 });
    expect(problemsOf({ COUNTERSIGN_REDIS_WAIT_REPLICAS: '-1', COUNTERSIGN_REDIS_WAIT_TIMEOUT_MS: '0' })).toEqual([
      { field: 'COUNTERSIGN_REDIS_WAIT_REPLICAS', message: expect.stringContaining('whole number of replicas') },
      { field: 'COUNTERSIGN_REDIS_WAIT_TIMEOUT_MS', message: 'must be a whole number of milliseconds from 1 to 60000 (a minute)' },
    ]);
    expect(problemsOf({ COUNTERSIGN_REDIS_WAIT_REPLICAS: 'one' }).map((problem) => problem.field)).toEqual(['COUNTERSIGN_REDIS_WAIT_REPLICAS']);
    // A call's start holds for the wait: an hour's timeout or a thousand replicas is a typo, not a setting.
    expect(problemsOf({ COUNTERSIGN_REDIS_WAIT_REPLICAS: '1000', COUNTERSIGN_REDIS_WAIT_TIMEOUT_MS: '3600000' })).toEqual([
      { field: 'COUNTERSIGN_REDIS_WAIT_REPLICAS', message: 'must be a whole number of replicas from 0 to 100 (0: a call starts once the primary has its marker)' },
      { field: 'COUNTERSIGN_REDIS_WAIT_TIMEOUT_MS', message: 'must be a whole number of milliseconds from 1 to 60000 (a minute)' },
    ]);
  });

  it('describes every form without its passwords', () => {
    for (const url of ['rediss://bot:topsecret@h:6380', 'rediss+cluster://bot:topsecret@h:7000', 'redis+sentinel://bot:topsecret@h/mymaster?sentinelPassword=topsecret']) {
      const summary = JSON.stringify(describeEnvironment(parseEnvironment({ ...HTTP, REDIS_URL: url }, noFile)));
      expect(summary).not.toContain('topsecret');
      expect(summary).toContain('"username":"bot"');
    }
  });
});
