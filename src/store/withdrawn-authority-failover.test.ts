import { randomUUID } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServerHandle } from '../../test/helpers/redis-server.js';
import { makeStep } from '../approvals/pending-step.test-support.js';
import type { PendingStep } from '../approvals/pending-step.js';
import { applyCallAction, type CallAction } from '../approvals/transitions/call-action.js';
import { commitTransition } from '../approvals/transitions/commit-transition.js';
import { newStepId } from './redis-keys.js';
import { createRedisStore } from './redis-store.js';
import type { StateStore } from './state-store.js';
import { newThreadState } from './thread-state.js';

/**
 * Review: the README says a decision lost in a failover "leaves the request pending on the new
 * primary, so nothing runs", and only the executing marker waits for a replica. That holds for a
 * lost approval. A lost *withdrawal* of authority (a Deny, a grant's Revoke) is the opposite: the
 * person was told it took effect, and after the failover the request or grant is back and can
 * still authorise a run. The replica replicates through a relay (as in
 * executing-marker-failover.test.ts) that can pass the stream on late, as a replica lags behind:
 * what the relay still holds when the primary dies never arrives, as a dead primary's unsent
 * stream. A withdrawal acknowledged only once a replica has it survives that; one acknowledged
 * at once is lost. A replica cut off for good cannot confirm anything: then the withdrawal must
 * not be reported as done.
 */
let primary: RedisServerHandle;
let replica: RedisServerHandle;
let link: Server;
/** What the relay does with the primary's stream: passes it on at once, `LAG_MS` late, or not at all. */
let relay: 'live' | 'late' | 'dropped' = 'live';
/** The primary died: what the relay still holds is lost. */
let cut = false;
/** Replication lag while `late`: well within the stores' wait for a replica. */
const LAG_MS = 200;
const WAIT_TIMEOUT_MS = 2_000;

beforeEach(async () => {
  relay = 'live';
  cut = false;
  primary = await startRedisServer();
  link = createServer((fromReplica) => {
    const toPrimary = connect(primary.port, '127.0.0.1');
    fromReplica.on('data', (chunk) => toPrimary.write(chunk));
    toPrimary.on('data', (chunk) => {
      if (relay === 'live') fromReplica.write(chunk);
      else if (relay === 'late') setTimeout(() => cut || fromReplica.write(chunk), LAG_MS);
    });
    const end = () => {
      fromReplica.destroy();
      toPrimary.destroy();
    };
    fromReplica.on('error', end).on('close', end);
    toPrimary.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => link.listen(0, '127.0.0.1', resolve));
  replica = await startRedisServer({ extraArguments: ['--replicaof', '127.0.0.1', String((link.address() as AddressInfo).port)] });
  for (let attempt = 0; !(await replicated(200)); attempt += 1) if (attempt > 50) throw new Error('replica never connected');
}, 30_000);

afterEach(async () => {
  link?.close();
  await Promise.all([replica?.stop(), primary?.stop().catch(() => {})]);
});

/**
 * Whether everything written so far is on the replica: a write, then WAIT 1 for it (a WAIT on a
 * connection that never wrote asks for offset 0, which any connected replica already has).
 */
async function replicated(timeoutMs: number): Promise<boolean> {
  const raw = new Redis(primary.url);
  try {
    await raw.incr('replication-barrier');
    return Number(await raw.call('WAIT', '1', String(timeoutMs))) === 1;
  } finally {
    raw.disconnect();
  }
}

/** Everything written so far is on the replica, then the stream reaches it `LAG_MS` late. */
async function replicatedThenLate(): Promise<void> {
  expect(await replicated(5_000)).toBe(true);
  relay = 'late';
}

/** Everything written so far is on the replica, then the stream is held back. */
async function replicatedThenLagging(): Promise<void> {
  expect(await replicated(5_000)).toBe(true);
  relay = 'dropped';
}

/** The primary dies, with what the relay still held; the replica is promoted (what Sentinel does); a store on it. */
async function failover(keyPrefix: string): Promise<StateStore> {
  cut = true;
  await primary.stop({ signal: 'SIGKILL' });
  const promote = new Redis(replica.url);
  try {
    await promote.call('REPLICAOF', 'NO', 'ONE');
  } finally {
    promote.disconnect();
  }
  return createRedisStore({ url: replica.url, keyPrefix, waitReplicas: 1, waitTimeoutMs: 500 });
}

async function createStep(store: StateStore, channel: string): Promise<PendingStep> {
  const template = makeStep(['apv-1'], { channel });
  const threadKey = `${template.teamId}:${channel}:${template.threadTs}`;
  const fence = { threadKey, token: (await store.tryLock(threadKey, 60_000))! };
  const step = { ...template, threadKey, stepId: newStepId(threadKey) };
  await store.createStep({ step, thread: { ...newThreadState(step, 1), pendingStepId: step.stepId }, ttlMs: 60_000, audit: [], fence });
  return step;
}

const act = (store: StateStore, stepId: string, userId: string, action: CallAction) =>
  commitTransition(store, stepId, (step) => {
    const result = applyCallAction(step, { stepId, approvalId: step.calls[0]!.approvalId, userId, origin: { teamId: step.teamId, channel: step.channel, membership: 'member' }, action }, { now: Date.now(), groupMembers: new Map(), newGrantId: randomUUID });
    return result.ok ? result.transition : undefined;
  });

describe('authority withdrawn just before a Redis failover (Sentinel default COUNTERSIGN_REDIS_WAIT_REPLICAS=1)', () => {
  it('a revoked grant stays revoked on the promoted replica: a call it would have cleared is refused', async () => {
    const keyPrefix = `revoke-failover:${randomUUID()}:`;
    const channel = 'CREVOKE';
    const before = createRedisStore({ url: primary.url, keyPrefix, waitReplicas: 1, waitTimeoutMs: WAIT_TIMEOUT_MS });
    let after: StateStore | undefined;
    try {
      const step = await createStep(before, channel);
      await act(before, step.stepId, 'UBOB', { kind: 'approve', version: 0, grant: { scope: 'channel', hours: 1, identicalArgumentsOnly: false } });
      const [grant] = await before.listGrants({ teamId: step.teamId, channel });
      expect(grant).toBeDefined();
      await replicatedThenLate();

      // Carol revokes the grant: the store says it is revoked (App Home shows it gone, the audit trail has it).
      const revoked = await before.revokeGrant({ teamId: step.teamId, channel, grantId: grant!.grantId, audit: (stored) => ({ type: 'grant-revoked', grantId: stored.grantId, toolName: stored.toolName, scope: stored.scope, channel, userId: 'UCAROL', expiresAt: stored.expiresAt, identicalArgumentsOnly: false }) });
      expect(revoked).toEqual({ grant });
      expect(await before.listGrants({ teamId: step.teamId, channel })).toEqual([]);

      after = await failover(keyPrefix);
      // A later call in the channel, cleared by that grant, is started on the new primary.
      const threadKey = `${step.teamId}:${channel}:1700000001.000100`;
      const fence = { threadKey, token: (await after.tryLock(threadKey, 60_000))! };
      const started = await after.markExecuting({
        fence,
        toolCallId: 'call-after-revoke',
        marker: { toolName: 'restart_service', input: {}, startedAt: Date.now() },
        ttlMs: 60_000,
        audit: [],
        grant: { teamId: step.teamId, channel, grantId: grant!.grantId },
      });
      expect(started, 'a grant whose revoke was acknowledged cleared a call after a failover').toBe('grant-gone');
    } finally {
      relay = 'live';
      await before.close();
      await after?.close();
    }
  }, 30_000);

  it('a denied call stays denied on the promoted replica: a later Approve is refused', async () => {
    const keyPrefix = `deny-failover:${randomUUID()}:`;
    const before = createRedisStore({ url: primary.url, keyPrefix, waitReplicas: 1, waitTimeoutMs: WAIT_TIMEOUT_MS });
    let after: StateStore | undefined;
    try {
      const step = await createStep(before, 'CDENY');
      await replicatedThenLate();
      // Carol denies: recorded, the card says "Denied by Carol".
      expect(await act(before, step.stepId, 'UCAROL', { kind: 'deny' })).toMatchObject({ decisions: { 'apv-1': { outcome: 'denied', userId: 'UCAROL' } } });

      after = await failover(keyPrefix);
      // Bob approves (App Home, a card copy, a click already on its way): the step is read from the new primary.
      await act(after, step.stepId, 'UBOB', { kind: 'approve', version: 0 }).catch(() => undefined);
      const stored = await after.getStep(step.stepId);
      expect(stored?.decisions['apv-1'], 'a denial acknowledged before the failover is gone, and an approval took its place').toMatchObject({ outcome: 'denied', userId: 'UCAROL' });
    } finally {
      relay = 'live';
      await before.close();
      await after?.close();
    }
  }, 30_000);
});

describe('authority withdrawn while the replica is cut off', () => {
  it('is recorded on the primary and reported unconfirmed, not as done; an approval does not wait for the replica at all', async () => {
    const keyPrefix = `withdraw-unconfirmed:${randomUUID()}:`;
    const channel = 'CUNCONFIRMED';
    const store = createRedisStore({ url: primary.url, keyPrefix, waitReplicas: 1, waitTimeoutMs: 500 });
    // Waits far longer than the test may run: an approval that waited for the replica would fail it.
    const approving = createRedisStore({ url: primary.url, keyPrefix, waitReplicas: 1, waitTimeoutMs: 60_000 });
    try {
      const granted = await createStep(store, channel);
      const denied = await createStep(store, 'CUNCONFIRMED2');
      await replicatedThenLagging();
      expect(await act(approving, granted.stepId, 'UBOB', { kind: 'approve', version: 0, grant: { scope: 'channel', hours: 1, identicalArgumentsOnly: false } })).toMatchObject({ decisions: { 'apv-1': { outcome: 'approved' } } });
      const [grant] = await store.listGrants({ teamId: granted.teamId, channel });

      const revoked = await store.revokeGrant({ teamId: granted.teamId, channel, grantId: grant!.grantId, audit: (stored) => ({ type: 'grant-revoked', grantId: stored.grantId, toolName: stored.toolName, scope: stored.scope, channel, userId: 'UCAROL', expiresAt: stored.expiresAt, identicalArgumentsOnly: false }) });
      expect(revoked).toEqual({ grant, unconfirmed: { wanted: 1, confirmed: 0 } });
      expect(await store.listGrants({ teamId: granted.teamId, channel })).toEqual([]);

      const shortfalls: unknown[] = [];
      const step = await commitTransition(
        store,
        denied.stepId,
        (current) => {
          const result = applyCallAction(current, { stepId: current.stepId, approvalId: 'apv-1', userId: 'UCAROL', origin: { teamId: current.teamId, channel: current.channel, membership: 'member' }, action: { kind: 'deny' } }, { now: Date.now(), groupMembers: new Map(), newGrantId: randomUUID });
          return result.ok ? result.transition : undefined;
        },
        { onUnconfirmed: (shortfall) => shortfalls.push(shortfall) },
      );
      expect(step?.decisions['apv-1']).toMatchObject({ outcome: 'denied', userId: 'UCAROL' });
      expect(shortfalls).toEqual([{ wanted: 1, confirmed: 0 }]);
    } finally {
      relay = 'live';
      await store.close();
      await approving.close();
    }
  }, 30_000);
});
