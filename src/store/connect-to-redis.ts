import { Redis } from 'ioredis';

/** How long a person at a terminal waits for a Redis that is not there before being told so. */
const CONNECT_TIMEOUT_MS = 3_000;
const COMMAND_TIMEOUT_MS = 5_000;
const CONNECT_ATTEMPTS = 2;

/**
 * A connection for a one-shot command: it fails within seconds instead of retrying forever as a
 * long-running bot would, and the error names the cause (refused, timed out, wrong password).
 */
export async function connectToRedis(url: string): Promise<Redis> {
  let lastError: Error | undefined;
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    commandTimeout: COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
    retryStrategy: (attempt) => (attempt >= CONNECT_ATTEMPTS ? null : 250),
    // ioredis arms this timer on disconnect even for a socket that already failed; the default (2s)
    // would keep the process alive after it has said "unreachable".
    disconnectTimeout: 100,
  });
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
