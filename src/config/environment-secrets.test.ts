import { describe, expect, it } from 'vitest';
import { environmentSecrets } from './environment-secrets.js';
import { parseEnvironment } from './environment.js';

const noFile = { fileExists: () => false };
const HTTP = { SLACK_BOT_TOKEN: 'xoxb-secret-bot-token', SLACK_SIGNING_SECRET: 'signing-secret-value', OPENAI_API_KEY: 'sk-secret-openai-key' };

describe('the secrets the logger scrubs', () => {
  it('are the tokens, the API key and the Redis password, as written and decoded', () => {
    const environment = parseEnvironment({ ...HTTP, REDIS_URL: 'redis://:pa%40ss-REDIS@localhost:6379' }, noFile);
    expect(environmentSecrets(environment).sort()).toEqual(['pa%40ss-REDIS', 'pa@ss-REDIS', 'signing-secret-value', 'sk-secret-openai-key', 'xoxb-secret-bot-token'].sort());
  });

  it('include a Sentinel setup’s own password', () => {
    const environment = parseEnvironment({ ...HTTP, REDIS_URL: 'redis+sentinel://:primary-PASS@s1:26379,s2:26379/mymaster?sentinelPassword=sentinel-PASS' }, noFile);
    expect(environmentSecrets(environment)).toEqual(expect.arrayContaining(['primary-PASS', 'sentinel-PASS']));
  });

  it('hold the whole Redis password when it has an unencoded `@`, as the client reads it (up to the last `@`)', () => {
    const environment = parseEnvironment({ ...HTTP, REDIS_URL: 'redis://:p@ssword-123@localhost:6379' }, noFile);
    // What ioredis sends (WHATWG URL's password, decoded), and as URL writes it back.
    expect(decodeURIComponent(new URL('redis://:p@ssword-123@localhost:6379').password)).toBe('p@ssword-123');
    expect(environmentSecrets(environment)).toEqual(expect.arrayContaining(['p@ssword-123', 'p%40ssword-123']));
  });
});
