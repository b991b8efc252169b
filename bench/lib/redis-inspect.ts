import { Redis } from 'ioredis';

/** `INFO commandstats` as { command: calls } (Lua's redis.call() counts too). */
export async function commandCalls(redis: Redis): Promise<Record<string, number>> {
  const info = await redis.info('commandstats');
  const calls: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[match[1] as string] = Number(match[2]);
  return calls;
}

/** Commands the inspecting client itself sends, left out of deltas. */
const INSPECTION_COMMANDS = new Set(['info']);

export function commandDelta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const delta: Record<string, number> = {};
  for (const [command, calls] of Object.entries(after)) {
    if (INSPECTION_COMMANDS.has(command)) continue;
    const difference = calls - (before[command] ?? 0);
    if (difference > 0) delta[command] = difference;
  }
  return delta;
}

export async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? Number.NaN);
}

export async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}

/** MEMORY USAGE with SAMPLES 0 (every element counted), pipelined in batches. */
export async function memoryUsage(redis: Redis, keys: readonly string[]): Promise<number[]> {
  const sizes: number[] = [];
  for (let start = 0; start < keys.length; start += 500) {
    const pipeline = redis.pipeline();
    for (const key of keys.slice(start, start + 500)) pipeline.call('MEMORY', 'USAGE', key, 'SAMPLES', '0');
    for (const [error, size] of (await pipeline.exec()) ?? []) sizes.push(error ? Number.NaN : Number(size ?? Number.NaN));
  }
  return sizes;
}

export async function hashField(redis: Redis, keys: readonly string[], field: string): Promise<Array<string | null>> {
  const values: Array<string | null> = [];
  for (let start = 0; start < keys.length; start += 500) {
    const pipeline = redis.pipeline();
    for (const key of keys.slice(start, start + 500)) pipeline.hget(key, field);
    for (const [, value] of (await pipeline.exec()) ?? []) values.push((value as string | null) ?? null);
  }
  return values;
}

export function mean(values: readonly number[]): number {
  const finite = values.filter(Number.isFinite);
  return finite.length === 0 ? Number.NaN : finite.reduce((sum, value) => sum + value, 0) / finite.length;
}

export async function keyTypes(redis: Redis, keys: readonly string[]): Promise<string[]> {
  const types: string[] = [];
  for (let start = 0; start < keys.length; start += 500) {
    const pipeline = redis.pipeline();
    for (const key of keys.slice(start, start + 500)) pipeline.type(key);
    for (const [, type] of (await pipeline.exec()) ?? []) types.push(String(type));
  }
  return types;
}
