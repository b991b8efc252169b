import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis-server.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * One primary, one replica and one sentinel (Debian's redis-server binary in sentinel mode), on
 * loopback. The sentinel declares the primary down after a second and promotes the replica. The
 * servers admit only an ACL user, so the bot's connections (found through the sentinel) must log in.
 */
const username = 'countersign';
const password = randomUUID();
const acl = ['--user', username, 'on', `>${password}`, '~*', '&*', '+@all', '--user', 'default', 'off'];
let primary: RedisServerHandle;
let replica: RedisServerHandle;
let sentinel: RedisServerHandle;
let directory: string;

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'countersign-sentinel-'));
  primary = await startRedisServer({ extraArguments: acl });
  replica = await startRedisServer({ extraArguments: [...acl, '--replicaof', '127.0.0.1', String(primary.port), '--masteruser', username, '--masterauth', password] });
  const config = join(directory, 'sentinel.conf');
  writeFileSync(
    config,
    [
      `sentinel monitor primary 127.0.0.1 ${primary.port} 1`,
      'sentinel down-after-milliseconds primary 1000',
      'sentinel failover-timeout primary 5000',
      `sentinel auth-user primary ${username}`,
      `sentinel auth-pass primary ${password}`,
      '',
    ].join('\n'),
  );
  sentinel = await startRedisServer({ leadingArguments: [config, '--sentinel'], extraArguments: ['--dir', directory] });
  const watching = new Redis(sentinel.port, '127.0.0.1');
  try {
    // The sentinel learns of the replica from the primary's INFO; a failover needs it known.
    await waitFor(async () => ((await watching.call('SENTINEL', 'REPLICAS', 'primary')) as unknown[]).length === 1, { timeoutMs: 15_000, message: 'the sentinel to know the replica' });
  } finally {
    watching.disconnect();
  }
});

afterAll(async () => {
  await Promise.all([sentinel?.stop(), replica?.stop(), primary?.stop()]);
  rmSync(directory, { recursive: true, force: true });
});

const harness = useHarnesses();
const restartCall = { name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } };

describe('behind Redis Sentinel (REDIS_URL=redis+sentinel://user:password@…/primary)', () => {
  // Its waits (replica, failover, answer) are each bounded; together they outlast the 20 s default.
  it('the primary dies while a card waits: the click after the failover is recorded once and the tool runs once', { timeout: 90_000 }, async () => {
    const h = await harness({ redisUrl: `redis+sentinel://${username}:${password}@127.0.0.1:${sentinel.port}/primary` });
    h.openai.enqueue({ toolCalls: [restartCall] }, { text: 'Restarted **worker** in staging.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in staging', ts: threadTs });
    const card = await waitFor(() => h.slack.messages(CHANNEL, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the approval card' });
    await h.settled();

    // Replication is asynchronous: make sure the replica has the pending step before the crash
    // (what a primary loses in its last moments is Redis's trade-off, not the bot's). On a loaded
    // machine the replica's link may be resyncing for a while: WAIT again until it acknowledges.
    const direct = new Redis(primary.port, '127.0.0.1', { username, password });
    try {
      await waitFor(async () => (await direct.call('WAIT', '1', '1000')) === 1, { timeoutMs: 30_000, message: 'the replica to acknowledge the pending step' });
    } finally {
      direct.disconnect();
    }
    await primary.stop({ signal: 'SIGKILL' });
    const watching = new Redis(sentinel.port, '127.0.0.1');
    try {
      await waitFor(async () => ((await watching.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', 'primary')) as string[])[1] === String(replica.port), { timeoutMs: 20_000, message: 'the failover' });
    } finally {
      watching.disconnect();
    }

    // The sentinel has switched; the bot reaches the new primary at its next reconnect attempt. The
    // approver clicks at once: a click that comes before the reconnect waits for it (up to
    // CLICK_STORE_WAIT_MS) instead of being told "could not record", which this test once saw beside a
    // second suite, before clicks waited. Here the reconnect usually wins the race; redis-restart.test.ts
    // shows the wait itself deterministically.
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    // Clicked twice (an impatient approver): recorded once either way.
    for (let click = 0; click < 2; click += 1) expect((await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve })).status).toBe(200);
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text.includes('Restarted *worker* in staging.')), { timeoutMs: 15_000, message: 'the answer' }).catch((error: Error) => {
      // Whether the clicks were refused ("could not record": the bot had not reached the new primary yet) or recorded and never resumed.
      const told = h.slack.callsTo('chat.postEphemeral').map((call) => String(call.args.text));
      throw new Error(
        `${error.message}; the approver was told: ${told.join(' | ') || 'nothing'}; the thread shows: ${threadReplies(h, threadTs).map((message) => message.text.slice(0, 80)).join(' | ')}; ` +
          `the bot logged: ${h.warnings().slice(-8).join('') || 'nothing'}`,
      );
    });
    await h.settled();
    expect(h.slack.callsTo('chat.postEphemeral').map((call) => String(call.args.text))).not.toContainEqual(expect.stringContaining('could not record'));
    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'staging']]);
    const events = await h.auditEvents();
    expect(events.filter((event) => event.type === 'decision').map((event) => (event.type === 'decision' ? event.userId : ''))).toEqual(['UBOB']);
    expect(events.filter((event) => event.type === 'tool-started')).toHaveLength(1);
  });
});
