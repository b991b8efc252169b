import type { Redis } from 'ioredis';
import { createRedisKeys } from '../../src/store/redis-keys.js';
import { hashField, keyTypes, mean, memoryUsage, scanKeys } from './redis-inspect.js';
import type { BenchResults } from './results.js';
import { round } from './stats.js';
import type { Thread } from './workload.js';

const KEY_PREFIX = 'countersign:';

/** Key families: the part after the prefix and the shard's hash tag (`{s3.0}:`) up to the next ':'. */
export function keyFamily(key: string, prefix = KEY_PREFIX): string {
  return key.slice(prefix.length).replace(/^\{[^}]*\}:/, '').split(':')[0] ?? '?';
}

/** The bot runs with the default shard count, so its key names are computed, not scanned for. */
const redisKeys = createRedisKeys({ keyPrefix: KEY_PREFIX });

/** Steps whose phase is `pending` (every countersign:{shard}:step:* hash, scanned). */
export async function countPendingSteps(redis: Redis): Promise<number> {
  const keys = await scanKeys(redis, `${KEY_PREFIX}*}:step:*`);
  const phases = await hashField(redis, keys, 'phase');
  return phases.filter((phase) => phase === 'pending').length;
}

export async function redisMemory(options: {
  redis: Redis;
  pendingThreads: Thread[];
  usedMemoryAtZero: number;
  usedMemoryAtMax: number;
  pendingCount: number;
}): Promise<BenchResults['redis']['memory']> {
  const { redis } = options;
  const stepKeys = await scanKeys(redis, `${KEY_PREFIX}*}:step:*`);
  const phases = await hashField(redis, stepKeys, 'phase');
  const stepSizes = await memoryUsage(redis, stepKeys);
  const pendingSizes = stepSizes.filter((_, index) => phases[index] === 'pending');
  const decidedSizes = stepSizes.filter((_, index) => phases[index] !== 'pending');
  // Every key, by family (the part after the prefix up to the next ':'), with its size.
  const allKeys = await scanKeys(redis, `${KEY_PREFIX}*`);
  const allSizes = await memoryUsage(redis, allKeys);
  const families: Record<string, { keys: number; bytes: number }> = {};
  allKeys.forEach((key, index) => {
    const family = keyFamily(key);
    families[family] ??= { keys: 0, bytes: 0 };
    families[family].keys += 1;
    families[family].bytes += Number.isFinite(allSizes[index]) ? (allSizes[index] as number) : 0;
  });
  // Sorted sets whose members are step ids (expiry and reminder schedules, the per-channel pending
  // index, …; found by type and membership, so new indexes are counted without changing this): a
  // pending approval costs one entry, at the set's average bytes per entry, in each set listing it.
  const types = await keyTypes(redis, allKeys);
  const zsetFamilies = new Map<string, string[]>();
  allKeys.forEach((key, index) => {
    if (types[index] !== 'zset') return;
    const family = keyFamily(key);
    zsetFamilies.set(family, [...(zsetFamilies.get(family) ?? []), key]);
  });
  const pendingIds = stepKeys.filter((_, index) => phases[index] === 'pending').map((key) => key.slice(key.indexOf('}:step:') + '}:step:'.length));
  const sampleIds = pendingIds.slice(0, 20);
  const indexes: Record<string, { bytes: number; entries: number; bytesPerEntry: number; listsPendingSteps: boolean }> = {};
  let scheduleBytesPerPending = 0;
  for (const [family, keys] of zsetFamilies) {
    let entries = 0;
    let listed = 0;
    for (const key of keys) {
      entries += await redis.zcard(key);
      for (const id of sampleIds) if ((await redis.zscore(key, id)) !== null) listed += 1;
    }
    const bytes = families[family]?.bytes ?? 0;
    const bytesPerEntry = entries === 0 ? 0 : bytes / entries;
    // Entries per pending step in this family (normally 0 or 1), from the sample.
    const perPending = sampleIds.length === 0 ? 0 : listed / sampleIds.length;
    scheduleBytesPerPending += perPending * bytesPerEntry;
    indexes[family] = { bytes, entries, bytesPerEntry: round(bytesPerEntry, 1), listsPendingSteps: perPending > 0 };
  }

  // Thread history: per thread a hash of its fields and a list of its messages. Threads with a pending approval are the ones measured.
  const threadIds = options.pendingThreads.map((thread) => `T0BENCH01:${thread.channel}:${thread.threadTs}`);
  const threadKeys = threadIds.map((id) => redisKeys.ofThread(id).thread(id));
  const messageKeys = threadIds.map((id) => redisKeys.ofThread(id).messages(id));
  const fieldSizes = await memoryUsage(redis, threadKeys);
  const messageSizes = await memoryUsage(redis, messageKeys);
  const threadSizes = fieldSizes.map((size, index) => size + (messageSizes[index] ?? 0));
  // History is stored once per thread: the mention's unique marker is in the thread key, not in the step.
  const sample = options.pendingThreads.slice(0, 200);
  let markerInThread = 0;
  let markerInStep = 0;
  for (const thread of sample) {
    const id = `T0BENCH01:${thread.channel}:${thread.threadTs}`;
    const fields = await redis.hget(redisKeys.ofThread(id).thread(id), 'meta');
    const messages = await redis.lrange(redisKeys.ofThread(id).messages(id), 0, -1);
    if (messages.some((message) => message.includes(thread.marker))) markerInThread += 1;
    const stepId = fields ? (JSON.parse(fields) as { pendingStepId?: string }).pendingStepId : undefined;
    if (stepId !== undefined && JSON.stringify(await redis.hgetall(redisKeys.ofStep(stepId).step(stepId))).includes(thread.marker)) markerInStep += 1;
  }

  const stepHash = round(mean(pendingSizes), 0);
  return {
    pendingSteps: pendingSizes.length,
    stepHashBytesPerPending: stepHash,
    scheduleBytesPerPending: round(scheduleBytesPerPending, 0),
    bytesPerPendingApproval: round(stepHash + scheduleBytesPerPending, 0),
    decidedStepHashBytes: round(mean(decidedSizes), 0),
    decidedSteps: decidedSizes.length,
    historyBytesPerThread: round(mean(threadSizes), 0),
    threadsMeasured: threadSizes.length,
    historyStoredOncePerThread: markerInThread === sample.length && markerInStep === 0,
    usedMemoryBytesPerPendingAllIn: round((options.usedMemoryAtMax - options.usedMemoryAtZero) / Math.max(1, options.pendingCount), 0),
    stepIndexes: indexes,
    keyFamilies: families,
    method:
      'MEMORY USAGE <key> SAMPLES 0 of every countersign:step:* hash whose phase is pending (averaged), plus one entry (at the set\'s average bytes per entry) in each sorted set that lists pending step ids (found by type and membership: the expiry schedule, the per-channel pending index, …); thread history (countersign:thread:*) averaged over the threads with a pending approval; all-in = INFO used_memory growth from 0 to the last pending target divided by the approvals created (includes history, dedupe keys and audit entries)',
  };
}
