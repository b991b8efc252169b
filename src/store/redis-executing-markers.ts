import { randomUUID } from 'node:crypto';
import type { AuditEventInput } from '../audit/audit-event.js';
import { FencedError } from './fenced-error.js';
import type { RedisDurableWrites } from './redis-durable-writes.js';
import { MARK_EXECUTING_SCRIPT } from './redis-executing-scripts.js';
import { ATTEMPT_TTL_MS, type RedisStoreContext } from './redis-store-context.js';
import { DISK_WAIT_FLOOR_MS } from './replica-confirmed-write.js';
import { ReplicationNotConfirmedError } from './replication-not-confirmed-error.js';
import type { ExecutingMarker, Fence, ThreadStore } from './state-store.js';

/**
 * A call's executing marker, written under the thread's fence before the call starts and waited on
 * as the replicas and the append-only file are told (`RedisDurableWrites`); taken off again when the
 * call will not start.
 */
export function createRedisExecutingMarkers({
  redis,
  run,
  keys,
  auditMaxLength,
  onRedisError,
  isClosed,
  clockArgument,
  prepare,
  logStored,
  durable: { replicas, waitTimeoutMs, confirmedWrites, forgetPersistence, waitsForDisk },
}: RedisStoreContext & { durable: RedisDurableWrites }): Pick<ThreadStore, 'markExecuting' | 'finishExecuting' | 'executingCalls'> {
  /**
   * A marker whose call will not start comes off again, under the fence, with a `tool-executed`
   * error after its `tool-started`. If that fails too the marker stays: a successor reports the
   * call as interrupted ("may or may not have completed") and never runs it, which is safe.
   */
  const unmarkExecuting = async ({ fence, toolCallId, markerJson, audit, reason }: { fence: Fence; toolCallId: string; markerJson: string; audit: readonly AuditEventInput[]; reason: string }) => {
    const started = audit.find((event) => event.type === 'tool-started');
    const notRun: AuditEventInput[] = started
      ? [{ type: 'tool-executed', teamId: started.teamId, channel: started.channel, threadTs: started.threadTs, toolName: started.toolName, toolCallId, status: 'error', durationMs: 0, error: reason }]
      : [];
    const { prepared, args } = prepare(notRun);
    const at = keys.ofThread(fence.threadKey);
    try {
      if ((await run.csUnmarkExecuting(at.executing(fence.threadKey), at.fence(fence.threadKey), at.audit(), fence.token, toolCallId, markerJson, auditMaxLength, ...args)) === 'ok') logStored(prepared);
    } catch (error) {
      if (!isClosed()) onRedisError?.({ kind: 'command', error });
    }
  };

  return {
    async markExecuting({ fence, toolCallId, marker, ttlMs, audit, grant }) {
      const { prepared, args } = prepare(audit);
      const at = keys.ofThread(fence.threadKey);
      const markerJson = JSON.stringify(marker);
      // Looked up under the thread's shard: a channel's grants share its threads' slot, and a grant
      // of another channel (never one that clears this thread's calls) is simply not found there.
      const grantsKey = grant ? at.grants(grant.teamId, grant.channel) : at.executing(fence.threadKey);
      // Named once, here: a resend after a lost reply carries the same attempt (`namedWrite`).
      const scriptKeys = [at.executing(fence.threadKey), at.fence(fence.threadKey), at.audit(), grantsKey, at.attempt(randomUUID())];
      const scriptArguments = [fence.token, toolCallId, markerJson, ttlMs, grant?.grantId ?? '', grant ? clockArgument() : '', auditMaxLength, ATTEMPT_TTL_MS, ...args];
      const disk = await waitsForDisk(at.index);
      if (replicas === 0 && !disk) {
        const reply = await run.csMarkExecuting(...scriptKeys, ...scriptArguments);
        if (reply === 'fenced') throw new FencedError(fence.threadKey);
        if (reply === 'grant-gone') return 'grant-gone';
        logStored(prepared);
        return 'marked';
      }
      // The call starts once the replicas have the marker too: a failover before that would lose
      // it (and the lock and claim written before it), and a successor would run the call again.
      // Likewise the primary's append-only file: a restart after an OS crash would lose it.
      const takeBack = (reason: string) => unmarkExecuting({ fence, toolCallId, markerJson, audit, reason });
      let written;
      try {
        written = await confirmedWrites.run({ shard: at.index, script: MARK_EXECUTING_SCRIPT, keys: scriptKeys, args: scriptArguments, disk });
        if (written.waitError) {
          forgetPersistence(at.index);
          throw written.waitError;
        }
      } catch (error) {
        // The marker may have been written before the wait failed (a refused WAIT, a lost connection).
        await takeBack(`Not run: Redis failed while recording it (${error instanceof Error ? error.message : String(error)})`);
        throw error;
      }
      if (written.reply === 'fenced') throw new FencedError(fence.threadKey);
      if (written.reply === 'grant-gone') return 'grant-gone';
      logStored(prepared);
      if (written.confirmed >= written.required && written.onDisk !== false) return 'marked';
      const shortfall =
        written.confirmed >= written.required
          ? new ReplicationNotConfirmedError({ wanted: 0, confirmed: 0, onDisk: false, timeoutMs: Math.max(waitTimeoutMs, DISK_WAIT_FLOOR_MS) })
          : new ReplicationNotConfirmedError({ wanted: written.required, confirmed: written.confirmed, timeoutMs: waitTimeoutMs });
      await takeBack(shortfall.message);
      throw shortfall;
    },

    async finishExecuting({ threadKey, toolCallId, marker, audit }) {
      const { prepared, args } = prepare([audit]);
      const at = keys.ofThread(threadKey);
      // Named (`namedWrite`): a resend after a lost reply does not write the call's `tool-executed` again.
      await run.csFinishExecuting(at.executing(threadKey), at.audit(), at.attempt(randomUUID()), toolCallId, JSON.stringify(marker), auditMaxLength, ATTEMPT_TTL_MS, ...args);
      logStored(prepared);
    },

    async executingCalls(threadKey) {
      const markers = new Map<string, ExecutingMarker>();
      for (const [toolCallId, json] of Object.entries(await redis.hgetall(keys.ofThread(threadKey).executing(threadKey)))) {
        markers.set(toolCallId, parseMarker(json));
      }
      return markers;
    },
  };
}

/** Markers written before they carried the call (a bare time) still say "it may have run". */
function parseMarker(json: string): ExecutingMarker {
  try {
    const parsed = JSON.parse(json) as unknown;
    if (parsed && typeof parsed === 'object' && 'toolName' in parsed) return parsed as ExecutingMarker;
  } catch {
    // fall through
  }
  return { toolName: 'unknown', input: null, startedAt: Number(json) || 0 };
}
