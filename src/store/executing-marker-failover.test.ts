import { randomUUID } from 'node:crypto';
import { createServer, connect, type Server, type AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServerHandle } from '../../test/helpers/redis-server.js';
import { pino } from 'pino';
import { createRedisAuditLog } from './redis-audit-log.js';
import { createRedisKeys } from './redis-keys.js';
import { createRedisStore } from './redis-store.js';
import { ReplicationNotConfirmedError } from './replication-not-confirmed-error.js';

/**
 * A call starts only once a replica has its executing marker. The marker is the only thing that
 * keeps a successor from running an approved call again; if the primary acknowledged it and died
 * within the replication lag, the promoted replica would lack it (and the lock and claim written
 * just before), and the next holder would claim the step and run the call a second time.
 */
let primary: RedisServerHandle;
let replica: RedisServerHandle;
let link: Server;
/** While true, what the primary sends its replica is dropped: replication lag, as on a slow link. */
let lagging = false;

beforeAll(async () => {
  primary = await startRedisServer();
  // The replica replicates through this relay, so a test can hold back the replication stream.
  link = createServer((fromReplica) => {
    const toPrimary = connect(primary.port, '127.0.0.1');
    fromReplica.on('data', (chunk) => toPrimary.write(chunk));
    toPrimary.on('data', (chunk) => {
      if (!lagging) fromReplica.write(chunk);
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
});

afterAll(async () => {
  link?.close();
  await Promise.all([replica?.stop(), primary?.stop().catch(() => {})]);
});

const threadKey = 'T1:C1:1700000000.000100';
const marking = (toolCallId: string) => ({
  toolCallId,
  marker: { toolName: 'restart', input: {}, startedAt: Date.now() },
  ttlMs: 60_000,
  audit: [{ type: 'tool-started', teamId: 'T1', channel: 'C1', threadTs: '1700000000.000100', toolName: 'restart', toolCallId, input: {}, inputHash: 'h', basis: { kind: 'no-approval-needed' } } as const],
});

describe('an executing marker and a Redis failover (COUNTERSIGN_REDIS_WAIT_REPLICAS=1)', () => {
  it('a call starts only once the replica has its marker; when the replica lags it is not started, and the promoted replica runs nothing twice', async () => {
    const keyPrefix = `failover:${randomUUID()}:`;
    // What REDIS_URL=redis+sentinel://… gets by default; a plain URL here, so the test can promote by hand.
    const before = createRedisStore({ url: primary.url, keyPrefix, waitReplicas: 1, waitTimeoutMs: 500 });
    const onReplica = new Redis(replica.url);
    const raw = new Redis(primary.url);
    try {
      // The replica is connected: wait until the primary streams to it.
      expect(await raw.call('WAIT', '1', '5000')).toBe(1);
      const claim = await before.enqueueWork(threadKey, JSON.stringify({ kind: 'resume', stepId: 'x' }), 30_000);
      expect(claim).toBeDefined();
      const fence = { threadKey, token: claim!.token };

      // In step: when markExecuting resolves, the replica has the marker already (no later read needed).
      await before.markExecuting({ fence, ...marking('call-0') });
      const markersKey = createRedisKeys({ keyPrefix }).ofThread(threadKey).executing(threadKey);
      expect(await onReplica.hkeys(markersKey)).toEqual(['call-0']);

      // The replica falls behind (a slow link, a busy box): the call is refused, not started.
      lagging = true;
      let outcome: unknown;
      try {
        let settled = false;
        const marked = before.markExecuting({ fence, ...marking('call-1') }).then(
          () => 'started',
          (error: unknown) => error,
        );
        void marked.finally(() => (settled = true));
        // The wait holds a connection of its own: the store's other commands (a click's) answer meanwhile.
        expect(await before.fenceState(fence)).toBe('current');
        expect(settled, 'a command queued behind the wait for the replica').toBe(false);
        outcome = await marked;
        expect(outcome, 'markExecuting resolved although no replica has the marker: the tool would run').toBeInstanceOf(ReplicationNotConfirmedError);
        expect(outcome).toMatchObject({ wanted: 1, confirmed: 0 });
        // Nothing on the primary says it may have run either: it was taken back, and the audit trail says it did not run.
        expect([...(await before.executingCalls(threadKey)).keys()]).toEqual(['call-0']);
        const audit = createRedisAuditLog({ url: primary.url, keyPrefix, logger: pino({ level: 'silent' }) });
        try {
          const events = (await audit.read({ sinceMs: 0 })).filter((event) => 'toolCallId' in event && event.toolCallId === 'call-1');
          expect(events).toEqual([
            expect.objectContaining({ type: 'tool-started' }),
            expect.objectContaining({ type: 'tool-executed', status: 'error', error: expect.stringMatching(/^Not run: .*1 Redis replica \(0 confirmed within 500 ms\)/) }),
          ]);
        } finally {
          await audit.close();
        }
        // The primary dies; the replica is promoted (what Sentinel does).
        await primary.stop({ signal: 'SIGKILL' });
      } finally {
        lagging = false;
      }
      await onReplica.call('REPLICAOF', 'NO', 'ONE');
      const after = createRedisStore({ url: replica.url, keyPrefix });
      try {
        // The call that started is known as started; the refused one never ran, so running it after recovery is its first run.
        expect([...(await after.executingCalls(threadKey)).keys()]).toEqual(['call-0']);
      } finally {
        await after.close();
      }
    } finally {
      raw.disconnect();
      onReplica.disconnect();
      await before.close();
    }
  }, 30_000);
});
