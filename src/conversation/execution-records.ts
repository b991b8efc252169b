import type { ExecutionReport, StartingCall } from '../agent/tool-set.js';
import type { AuditEventInput } from '../audit/audit-event.js';
import { grantAuditEvent } from '../approvals/grant.js';
import { GrantNoLongerHoldsError } from '../agent/revoked-grant.js';
import { inputHash } from '../approvals/input-version.js';
import { faultPoint } from '../runtime/fault-points.js';
import type { ThreadState } from '../store/thread-state.js';
import type { PhaseDependencies } from './phase-dependencies.js';
import type { TurnScope } from './turn-scope.js';

/**
 * The records around every tool run: an executing marker (with the `tool-started` audit of why the
 * call may run) written under the fence just before it runs, so a successor never runs it again,
 * and the `tool-executed` record after.
 */
export function createExecutionRecords({ store, logger, limits, now, metrics }: Pick<PhaseDependencies, 'store' | 'logger' | 'limits' | 'now' | 'metrics'>) {
  async function markStarted(scope: TurnScope, thread: ThreadState, call: StartingCall): Promise<void> {
    const where = { teamId: thread.teamId, channel: thread.channel, threadTs: thread.threadTs };
    const audit: AuditEventInput[] = [{ type: 'tool-started', ...where, toolName: call.toolName, toolCallId: call.toolCallId, input: call.input, inputHash: inputHash(call.input), basis: call.basis }];
    // Written with the marker (atomically, under the fence), so they record a call about to start:
    // a check after the marker can still refuse it, and its tool-executed then says "Not run".
    const approval = call.automatic;
    if (approval) {
      audit.push({ type: 'auto-approved', ...where, toolName: approval.toolName, input: approval.input, mode: approval.mode, requesterId: approval.requesterId, ...(approval.grant ? { grantId: approval.grant.grantId } : {}), ...(approval.schedule ? { schedule: approval.schedule } : {}) });
      // Used by the one whose request the call is for; the grantor is named in the record's `grantedBy`.
      if (approval.grant) audit.push(grantAuditEvent('grant-used', approval.grant, approval.requesterId));
    }
    faultPoint('before-tool');
    // A grant-cleared call's grant is checked in the write of its marker: a revoke (or its expiry, by
    // the store's clock) is then ordered strictly before the start (nothing written, the call is not run) or after it.
    const grant = call.basis.kind === 'grant' ? { teamId: thread.teamId, channel: thread.channel, grantId: call.basis.grantId } : undefined;
    const marked = await scope.lease.guard(() =>
      store.markExecuting({ fence: scope.lease.fence, toolCallId: call.toolCallId, marker: { toolName: call.toolName, input: call.input, startedAt: now() }, ttlMs: limits.historyTtlMs, audit, ...(grant ? { grant } : {}) }),
    );
    if (marked === 'grant-gone' && grant) throw new GrantNoLongerHoldsError({ grantId: grant.grantId, toolName: call.toolName });
    faultPoint('after-marker');
    // The marker was written while this process held the thread; it may have stalled since.
    await scope.lease.assertHeld();
  }

  async function markFinished(scope: TurnScope, thread: ThreadState, report: ExecutionReport): Promise<void> {
    metrics.toolExecuted({ toolName: report.toolName, status: report.status === 'ok' ? 'ok' : 'error', durationMs: report.durationMs });
    await store
      .finishExecuting({
        threadKey: thread.threadKey,
        toolCallId: report.toolCallId,
        marker: { toolName: report.toolName, input: null, startedAt: now() - report.durationMs, finishedAt: now() },
        audit: { type: 'tool-executed', teamId: thread.teamId, channel: thread.channel, threadTs: thread.threadTs, ...report },
      })
      .catch((error: unknown) => logger.error({ event: 'tool-executed-record-failed', err: error }, 'could not record that a tool ran'));
    // A call can take long, or the process stall while it runs: before asking the model anything
    // more, make sure this process still holds the thread (a round trip only once the lock it last
    // renewed may have lapsed; a renewal that found another holder has ended the lease already).
    await scope.lease.assertHeld().catch(() => {});
  }

  return { markStarted, markFinished };
}
