import type { Cluster, Redis } from 'ioredis';
import { isHealthProbeKey } from './redis-keys.js';

/** Keys SCAN looks at per call, and calls per node before giving up (about a million keys a node). */
const SCAN_BATCH = 10_000;
const SCAN_CALLS = 100;

/**
 * Whether Redis holds any key under `keyPrefix` (on every primary of a Cluster), by SCAN with a
 * pattern, stopping at the first key found; `/healthz`'s probe keys (`isHealthProbeKey`) do not
 * count. `unknown`: a node holds more keys than the scan looks through (a Redis shared with other
 * applications); the caller asks in order to refuse to guess, so "cannot tell" is not "nothing there".
 */
export async function prefixHasKeys({ redis, keyPrefix }: { redis: Redis | Cluster; keyPrefix: string }): Promise<'some' | 'none' | 'unknown'> {
  const pattern = `${keyPrefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
  const nodes = redis.isCluster ? (redis as Cluster).nodes('master') : [redis as Redis];
  let answer: 'none' | 'unknown' = 'none';
  for (const node of nodes) {
    let cursor = '0';
    let calls = 0;
    do {
      if (calls === SCAN_CALLS) {
        answer = 'unknown';
        break;
      }
      calls += 1;
      const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_BATCH);
      // A health probe's key is written before any data (and again after Redis lost it): not data.
      if (found.some((name) => !isHealthProbeKey(keyPrefix, name))) return 'some';
      cursor = next;
    } while (cursor !== '0');
  }
  return answer;
}
