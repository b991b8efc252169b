import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import type { Logger } from 'pino';
import { appendQuietly, type AuditLog } from '../../audit/audit-log.js';
import { judgeRetry } from '../../conversation/failed-turn.js';
import type { ThreadMessenger } from '../../conversation/thread-messenger.js';
import type { ThreadWorker } from '../../conversation/thread-worker.js';
import type { StateStore } from '../../store/state-store.js';
import { threadKeyOf } from '../../store/thread-state.js';
import { EXTERNAL_USER_TEXT, MEMBERSHIP_UNVERIFIED_TEXT } from '../../approvals/transitions/call-action.js';
import { APPROVAL_ACTION_IDS } from '../blocks/action-ids.js';
import { createOrganisationMembership, type OrganisationMembership } from '../organisation-membership.js';
import { actorOf, clickOrigin, tellPrivately } from './approval-actions.js';

/**
 * "Try again" on a failure notice: the failed turn runs again from the stored history, for the
 * person who asked, queued like any work. Only that person may retry it (checked here for a quick
 * answer, and again when the item runs); whoever clicks, the requester stays theirs.
 */
export function registerRetryTurn(
  app: App,
  {
    worker,
    messenger,
    store,
    audit,
    logger,
    organisationMembership = createOrganisationMembership({ logger }),
  }: { worker: ThreadWorker; messenger: ThreadMessenger; store: StateStore; audit: AuditLog; logger: Logger; organisationMembership?: OrganisationMembership },
): void {
  app.action<BlockAction<ButtonAction>>({ type: 'block_actions', action_id: APPROVAL_ACTION_IDS.retry }, async ({ ack, body, client }) => {
    await ack();
    const { channel, threadTs } = clickOrigin(body);
    const { userId, origin } = await actorOf({ body, channel, membership: organisationMembership, client });
    if (!channel || !threadTs || !origin.teamId) return;
    if (origin.membership !== 'member') {
      const [code, reason] = origin.membership === 'external' ? ['external-user', EXTERNAL_USER_TEXT] : ['membership-unverified', MEMBERSHIP_UNVERIFIED_TEXT];
      await appendQuietly(audit, { type: 'action-refused', teamId: origin.teamId, channel, userId, action: 'retry', code, reason }, logger);
      return await tellPrivately(messenger, body, reason);
    }
    const address = { teamId: origin.teamId, channel, threadTs };
    try {
      // The thread is found by the click's own workspace and channel: a click from elsewhere finds nothing.
      const failed = (await store.getThread(threadKeyOf(address)))?.failedTurn;
      const judgement = judgeRetry(failed, { clickedBy: userId });
      if (!judgement.allowed) {
        if (judgement.code === 'not-requester') await appendQuietly(audit, { type: 'action-refused', teamId: origin.teamId, channel, userId, action: 'retry', code: judgement.code, reason: judgement.message }, logger);
        return await tellPrivately(messenger, body, judgement.message);
      }
      await worker.submit(threadKeyOf(address), { kind: 'retry', failureId: failed!.id, clickedBy: userId, ...address }, { fromRequest: true });
    } catch {
      // Usually Redis being unreachable: say so rather than leave the click unanswered.
      await tellPrivately(messenger, body, ':warning: I could not queue the retry, so nothing ran. Please try again in a moment.');
    }
  });
}
