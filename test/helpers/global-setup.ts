import type { TestProject } from 'vitest/node';
import { startRedisServer } from './redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A Redis for the whole run; tests isolate themselves with their own key prefixes. */
    redisUrl: string;
  }
}

/**
 * One redis-server per test run (not per file) keeps the suite fast; an externally managed
 * Redis (CI service container) is used instead when REDIS_URL is set.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const externalUrl = process.env.REDIS_URL;
  if (externalUrl) {
    project.provide('redisUrl', externalUrl);
    return async () => {};
  }
  const redis = await startRedisServer();
  project.provide('redisUrl', redis.url);
  return async () => {
    await redis.stop();
  };
}
