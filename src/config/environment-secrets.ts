import type { EnvironmentConfig } from './environment.js';

/**
 * The secret values the environment gives the bot, for the logger to scrub from every line
 * (`createLogger({ secrets })`): the Slack tokens and signing secret, the model's API key, and the
 * Redis password, as written in REDIS_URL and as decoded (what the client sends). The model's URL
 * cannot hold credentials: `parseEnvironment` refuses them.
 */
export function environmentSecrets(environment: EnvironmentConfig): string[] {
  const { slack, openai, redis } = environment;
  const secrets: Array<string | undefined> = [slack.botToken, slack.signingSecret, slack.appToken, openai.apiKey, ...urlPasswords(environment.redisUrl)];
  // Already decoded by the parser; a sentinel password is only in the query, which urlPasswords skips.
  if (redis !== undefined && redis.kind !== 'standalone') secrets.push(redis.password, redis.kind === 'sentinel' ? redis.sentinelPassword : undefined);
  return [...new Set(secrets.filter((secret): secret is string => secret !== undefined && secret !== ''))];
}

/**
 * The password of `scheme://user:password@…`: as written, as URL writes it back (an error quoting
 * `url.href`), and decoded (what the client sends). Its userinfo ends at the LAST `@` before the
 * path, as WHATWG URL (which ioredis parses a redis:// URL with) reads it: `redis://:p@ss-123@host`
 * sends `p@ss-123`, not `p`. The regex also reads a multi-host Redis URL, which URL cannot parse.
 */
function urlPasswords(url: string | undefined): string[] {
  if (url === undefined) return [];
  const written = /^[a-z][a-z0-9+.-]*:\/\/[^:/?#]*:([^/?#]*)@/i.exec(url)?.[1];
  return [...withDecoded(written), ...withDecoded(URL.parse(url)?.password)];
}

function withDecoded(value: string | undefined): string[] {
  if (value === undefined || value === '') return [];
  try {
    return [value, decodeURIComponent(value)];
  } catch {
    return [value];
  }
}
