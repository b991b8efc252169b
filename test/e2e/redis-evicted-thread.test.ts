import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createRedisKeys, type ShardKeys } from '../../src/store/redis-keys.js';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis-server.js';
import { CHANNEL, TEAM_ID, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * Redis with `maxmemory` and an evicting policy (volatile-lru is the default of ElastiCache, Azure
 * Cache and Memorystore; every countersign key has a TTL, so all of them are candidates). While a card
 * waits for hours, reminder/expiry sweeps and App Home read its step but nothing reads its thread, so
 * the thread's keys are the least recently used and go first. README "Redis persistence": the bot
 * warns of such a policy at start-up, and a decision whose thread is gone closes its step visibly
 * instead of resuming an empty thread (which ran nothing, told nobody, and left the step for every
 * recovery sweep to offer again until its TTL).
 */
const harness = useHarnesses();

describe('a Redis that evicts keys under maxmemory', () => {
  let redis: RedisServerHandle;
  beforeAll(async () => {
    redis = await startRedisServer({ extraArguments: ['--maxmemory', '100mb', '--maxmemory-policy', 'volatile-lru'] });
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('is warned of at start-up, saying to set noeviction, and named in /healthz', async () => {
    const h = await harness({ redisUrl: redis.url });
    const lines = () => h.warnings().map((line) => JSON.parse(line) as { event?: string; msg?: string });
    const warning = await waitFor(() => lines().find((line) => line.event === 'redis-evicts-keys'), { message: 'the start-up warning' });
    expect(warning.msg).toContain('maxmemory-policy volatile-lru');
    expect(warning.msg).toContain('Set maxmemory-policy noeviction');
    const health = (await (await fetch(`${h.baseUrl}/healthz`)).json()) as { warnings?: string[] };
    expect(health.warnings).toContain('redis-evicts-keys');
  });
});

describe('a waiting card whose thread state Redis evicted', () => {
  let admin: Redis;
  beforeAll(() => {
    admin = new Redis(inject('redisUrl'));
  });
  afterAll(async () => {
    await admin?.quit();
  });

  // Eviction takes keys one by one: the thread's history may go without its record, or both.
  it.each([
    ['both of its keys', (at: ShardKeys, threadKey: string) => [at.thread(threadKey), at.messages(threadKey)]],
    ['its history only', (at: ShardKeys, threadKey: string) => [at.messages(threadKey)]],
  ])('Approve closes the call unrun (%s evicted): the card and the thread say why, the audit trail records it, and no sweep offers it again', async (_keys, evicted) => {
    const h = await harness({ sweepIntervalMs: 100, environment: { COUNTERSIGN_LOCK_TTL_MS: '300' } });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'Restarted worker in staging.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in staging', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the approval card' });
    await h.settled();

    const threadKey = `${TEAM_ID}:${CHANNEL}:${threadTs}`;
    const at = createRedisKeys({ keyPrefix: h.keyPrefix }).ofThread(threadKey);
    expect(await admin.exists(at.thread(threadKey), at.messages(threadKey))).toBe(2);
    // What eviction does to the least recently used keys.
    await admin.del(...evicted(at, threadKey));

    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    const stepId = approve.value.split(':')[0] as string;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text?.includes("I lost this thread's saved conversation")), { message: 'the notice' });
    expect(notice.text).toContain('nothing approved here was run');
    await h.settled();

    expect(h.invocations()).toEqual([]);
    const shown = JSON.stringify(h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)?.blocks);
    expect(shown).toContain("Not run: the thread's saved state was lost (Redis evicted or flushed it)");
    expect(shown).toContain('it had been approved by');
    const closed = (await h.auditEvents()).filter((event) => event.type === 'decision' && event.stepId === stepId && event.userId === 'countersign');
    expect(closed).toEqual([expect.objectContaining({ outcome: 'denied', toolName: 'restart_service', reason: expect.stringContaining("the thread's saved state was lost") })]);
    // No longer a decided step waiting for its resume.
    expect((await h.bot.store.getStep(stepId))?.phase).toBe('resumed');
    // Barrier: two whole sweeps (each runs the recovery) after the close; neither offered the step again.
    await h.settled({ sweep: true });
    await h.settled({ sweep: true });
    expect(h.warnings().filter((line) => line.includes('"resume-recovered"'))).toEqual([]);
  });
});
