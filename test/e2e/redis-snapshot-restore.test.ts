import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MARK_EXECUTING_SCRIPT } from '../../src/store/redis-executing-scripts.js';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis-server.js';
import { startWaitAofProxy, type WaitAofProxy } from '../helpers/waitaof-proxy.js';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

/**
 * README "Redis persistence". A self-run Redis with its default persistence keeps RDB snapshots only
 * (`save 3600 1 300 100 60 10000`, `appendonly no`; the official Docker image runs exactly that). A
 * restart (a crash, an OOM kill, a host reboot) reloads the last snapshot: every write after it is
 * gone, the executing marker and the resume claim included. No code can make that durable: the bot
 * says so at start-up and in /healthz. With `appendonly yes` it waits, before a call starts, until
 * the primary has fsynced the call's executing marker (WAITAOF 1 0, Redis 7.2+), so an OS crash with
 * `appendfsync everysec` cannot lose it either.
 */
const harness = useHarnesses();

const RDB_DEFAULTS = ['--save', '3600 1 300 100 60 10000', '--appendonly', 'no'];

async function healthOf(h: Harness): Promise<Record<string, unknown>> {
  const response = await fetch(`${h.baseUrl}/healthz`);
  return (await response.json()) as Record<string, unknown>;
}

const loggedEvents = (h: Harness) => h.warnings().map((line) => JSON.parse(line) as { event?: string; msg?: string });

/** Mentions the bot, approves its card as Bob and waits for the turn's last answer. */
async function approveRestart(h: Harness, answer: string): Promise<string> {
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
  const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the approval card' });
  const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
  await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
  await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === answer), { message: 'the answer' });
  await h.settled();
  return threadTs;
}

describe('an RDB-only Redis (its defaults: snapshots, `appendonly no`)', () => {
  let redis: RedisServerHandle;
  let directory: string;
  let admin: Redis;
  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'countersign-rdb-'));
    redis = await startRedisServer({ extraArguments: [...RDB_DEFAULTS, '--dir', directory, '--dbfilename', 'snapshot.rdb'] });
    admin = new Redis(redis.url, { maxRetriesPerRequest: null });
    admin.on('error', () => {});
  });
  afterAll(async () => {
    admin?.disconnect();
    await redis?.stop();
    rmSync(directory, { recursive: true, force: true });
  });

  it('is warned of at start-up, with what to set, and named in /healthz', async () => {
    const h = await harness({ redisUrl: redis.url });
    const warning = await waitFor(() => loggedEvents(h).find((line) => line.event === 'redis-not-durable'), { message: 'the start-up warning' });
    expect(warning.msg).toContain('aof_enabled:0');
    expect(warning.msg).toContain('COUNTERSIGN_REDIS_WAIT_REPLICAS=0');
    expect(warning.msg).toContain('an approved call may run twice');
    expect(warning.msg).toContain('`appendonly yes`');
    expect(warning.msg).toContain('COUNTERSIGN_REDIS_WAIT_REPLICAS=1');
    expect(await healthOf(h)).toEqual({ status: 'ok', store: 'redis', redis: 'up', warnings: ['redis-not-durable'] });
  });

  // The documented limitation (README "Redis persistence"): what the warning above is about.
  it('documented limitation: restarted from a snapshot taken between an approval and its run, the approved call runs a second time', async () => {
    let snapshotTaken = false;
    const h = await harness({
      redisUrl: redis.url,
      sweepIntervalMs: 100,
      environment: { COUNTERSIGN_LOCK_TTL_MS: '500' },
      wrapStore: (store) => ({
        ...store,
        commitStepAndQueue: async (transition, resume) => {
          const result = await store.commitStepAndQueue(transition, resume);
          // What an automatic BGSAVE whose change count the decision completed would hold.
          if (transition.completed && !snapshotTaken) {
            snapshotTaken = true;
            await admin.save();
          }
          return result;
        },
      }),
    });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: 'Restarted worker in prod.' }, { text: 'Restarted worker in prod.' });
    await approveRestart(h, 'Restarted worker in prod.');
    expect(snapshotTaken).toBe(true);
    expect(h.invocations()).toHaveLength(1);

    // Redis is killed (no snapshot on the way down) and comes back from its last snapshot: the
    // decision and its resume, not the marker.
    await redis.restart({ signal: 'SIGKILL' });
    await waitFor(async () => (await fetch(`${h.baseUrl}/healthz`)).ok, { timeoutMs: 10_000, message: 'the bot back on Redis' });
    // Barrier: the restored queue (the resume item) is drained by the recovery sweep.
    await h.settled({ sweep: true, timeoutMs: 15_000 });
    const restart = ['rollout', 'restart', 'deployment/worker', '-n', 'prod'];
    expect(h.invocations(), 'RDB-only Redis can lose the executing marker; if this changed, update README "Redis persistence"').toEqual([restart, restart]);
  });
});

describe('a Redis with `appendonly yes`', () => {
  let redis: RedisServerHandle;
  let directory: string;
  /** Set when the installed Redis has no WAITAOF (before 7.2): it answers through the proxy instead. */
  let proxy: WaitAofProxy | undefined;
  let url: string;
  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'countersign-aof-'));
    redis = await startRedisServer({ extraArguments: ['--appendonly', 'yes', '--appendfsync', 'everysec', '--dir', directory] });
    const probe = new Redis(redis.url);
    try {
      const hasWaitAof = await probe.call('WAITAOF', '0', '0', '0').then(
        () => true,
        () => false,
      );
      if (!hasWaitAof) proxy = await startWaitAofProxy({ port: redis.port });
    } finally {
      probe.disconnect();
    }
    url = proxy?.url ?? redis.url;
  });
  afterAll(async () => {
    await proxy?.close();
    await redis?.stop();
    rmSync(directory, { recursive: true, force: true });
  });

  /** WAITAOF calls the server counted (a Redis 7.2+), or the proxy answered. */
  async function waitAofCalls(): Promise<string[][]> {
    if (proxy) return proxy.seen.map((seen) => seen.args);
    const admin = new Redis(redis.url);
    try {
      const stats = await admin.info('commandstats');
      const calls = Number(/cmdstat_waitaof:calls=(\d+)/.exec(stats)?.[1] ?? 0);
      return Array.from({ length: calls }, () => ['WAITAOF']);
    } finally {
      admin.disconnect();
    }
  }

  it('is not warned of, and a call starts only after the primary fsynced its executing marker (WAITAOF 1 0)', async () => {
    const before = (await waitAofCalls()).length;
    const h = await harness({ redisUrl: url });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: 'Restarted worker in prod.' });
    await approveRestart(h, 'Restarted worker in prod.');
    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'prod']]);
    // The start-up check (the same read /healthz reports) found nothing to warn of.
    expect(await healthOf(h)).toEqual({ status: 'ok', store: 'redis', redis: 'up' });
    expect(loggedEvents(h).filter((line) => line.event === 'redis-not-durable')).toEqual([]);

    const calls = (await waitAofCalls()).slice(before);
    // The start-up probe (`WAITAOF 0 0 0`) and the marker's wait.
    expect(calls.length).toBeGreaterThanOrEqual(2);
    if (proxy) {
      const waits = proxy.seen.filter((seen) => seen.args[1] === '1');
      expect(waits).toHaveLength(1);
      // On the marker's own connection, right after its script.
      expect(waits[0]?.after?.[0]?.toUpperCase()).toBe('EVAL');
      expect(waits[0]?.after?.[1]).toBe(MARK_EXECUTING_SCRIPT);
      expect(waits[0]?.args.slice(1, 3)).toEqual(['1', '0']);
    }
  });

  it('a marker the append-only file did not confirm in time: the call is not run, and the audit trail and the model say why', async (context) => {
    // Only a proxy can make a healthy disk late.
    if (!proxy) context.skip();
    const waitAof = proxy!;
    waitAof.answer = [0, 0];
    try {
      const h = await harness({ redisUrl: url });
      h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: 'It was not run.' });
      const threadTs = await approveRestart(h, 'It was not run.');
      expect(h.invocations()).toEqual([]);
      const executed = (await h.auditEvents()).filter((event) => event.type === 'tool-executed' && event.threadTs === threadTs);
      expect(executed).toEqual([expect.objectContaining({ status: 'error', error: expect.stringContaining("Redis's append-only file on disk") })]);
      const toolResult = JSON.stringify(h.openai.requests.at(-1)?.body);
      expect(toolResult).toContain("Redis's append-only file on disk");
    } finally {
      waitAof.answer = [1, 0];
    }
  });
});
