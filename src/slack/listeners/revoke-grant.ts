import type { Logger } from 'pino';
import { grantAuditEvent, type Grant } from '../../approvals/grant.js';
import { approverGroupIds, type GroupMembers } from '../../approvals/policy/approver-eligibility.js';
import { authorizeApprover } from '../../approvals/policy/authorize-approver.js';
import type { Membership } from '../../approvals/transitions/call-action.js';
import { unconfirmedWithdrawalText } from '../../approvals/unconfirmed-withdrawal.js';
import { appendQuietly, type AuditLog } from '../../audit/audit-log.js';
import type { StateStore } from '../../store/state-store.js';
import { writeDidNotRun } from '../../store/write-not-run.js';
import { membershipRefusal } from './membership-refusal.js';

const REVOKE_UNKNOWN_TEXT =
  ':warning: I could not revoke that grant just now, and cannot tell whether it went through. If it is still listed, it is still active: revoke it again in a minute.';
const REVOKE_NOT_RUN_TEXT = ':warning: I could not revoke that grant just now, so nothing changed: it is still in force. Please revoke it again in a minute.';

export interface RevokeGrantOptions {
  store: StateStore;
  audit: AuditLog;
  logger: Logger;
  resolveGroups: (groupIds: readonly string[]) => Promise<GroupMembers>;
}

/**
 * Revokes `grant` for `userId`, wherever the click came from (`/countersign grants`, App Home):
 * allowed to the person who granted it and to anyone who could approve the tool, and only to
 * members of the workspace's organisation (`membership`, from the click's payload); a refusal is
 * audited and changes nothing. Returns what to tell the person, also when the store's write failed:
 * that nothing changed when Redis refused it or it was never sent (`writeDidNotRun`), else that
 * whether it went through is unknown; what fails before the store is asked is the caller's to answer.
 */
export async function revokeGrantAs(
  { store, audit, logger, resolveGroups }: RevokeGrantOptions,
  { grant, userId, membership }: { grant: Grant; userId: string; membership: Membership },
): Promise<{ revoked: boolean; message: string }> {
  // A partner organisation's people in a shared channel see grant ids (in listings, in button values).
  const outsider = membershipRefusal(membership);
  if (outsider) {
    await appendQuietly(audit, { type: 'action-refused', teamId: grant.teamId, channel: grant.channel, grantId: grant.grantId, toolName: grant.toolName, userId, action: 'revoke', code: outsider.code, reason: outsider.reason }, logger);
    return { revoked: false, message: outsider.reason };
  }
  if (grant.grantedBy !== userId) {
    const authorization = authorizeApprover({
      evaluation: grant.evaluation,
      userId,
      requesterId: grant.grantedBy,
      groupMembers: await resolveGroups(approverGroupIds(grant.evaluation)),
      approvedBy: [],
    });
    if (!authorization.allowed) {
      const reason = `${authorization.reason.replace(/ approve this$/, ' revoke this grant')}`;
      await appendQuietly(audit, { type: 'action-refused', teamId: grant.teamId, channel: grant.channel, grantId: grant.grantId, toolName: grant.toolName, userId, action: 'revoke', code: authorization.code, reason }, logger);
      return { revoked: false, message: `${reason}.` };
    }
  }
  // Removed with its audit record in one write, only if it is still the grant that was read.
  let revoked: Awaited<ReturnType<StateStore['revokeGrant']>>;
  try {
    revoked = await store.revokeGrant({ teamId: grant.teamId, channel: grant.channel, grantId: grant.grantId, audit: (stored) => grantAuditEvent('grant-revoked', stored, userId) });
  } catch (error) {
    // Redis answered with a refusal (NOREPLICAS, MISCONF, READONLY, ...) or the write never left: the grant stands.
    if (writeDidNotRun(error)) {
      logger.error({ event: 'revoke-write-refused', grantId: grant.grantId, err: error }, 'could not revoke a grant: the write did not run');
      return { revoked: false, message: REVOKE_NOT_RUN_TEXT };
    }
    // Otherwise it may still have been applied (a reply lost after Redis ran it): not "nothing changed".
    logger.error({ event: 'revoke-write-failed', grantId: grant.grantId, err: error }, 'could not tell whether a grant was revoked');
    return { revoked: false, message: REVOKE_UNKNOWN_TEXT };
  }
  if (!revoked) return { revoked: false, message: 'That grant has already been revoked.' };
  const message = `Revoked the grant for \`${revoked.grant.toolName.replace(/[`<>&]/g, '')}\`: it will ask for approval again.`;
  if (!revoked.unconfirmed) return { revoked: true, message };
  // It stands on the primary, but a failover could still bring the grant back: the person is told so.
  logger.warn({ event: 'withdrawal-not-confirmed', grantId: grant.grantId, ...revoked.unconfirmed }, 'revoked a grant, but Redis replicas did not confirm it in time');
  return { revoked: true, message: `${message} ${unconfirmedWithdrawalText(revoked.unconfirmed, 'If the grant is listed again, revoke it again.')}` };
}
