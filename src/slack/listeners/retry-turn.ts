import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import type { ThreadWorker } from '../../conversation/thread-worker.js';
import { threadKeyOf } from '../../store/thread-state.js';
import { APPROVAL_ACTION_IDS } from '../blocks/action-ids.js';
import type { ThreadMessenger } from '../../conversation/thread-messenger.js';
import { clickOrigin, tellPrivately } from './approval-actions.js';

/** "Try again" on a failure notice: the turn runs again from the stored history, queued like any work. */
export function registerRetryTurn(app: App, { worker, messenger }: { worker: ThreadWorker; messenger: ThreadMessenger }): void {
  app.action<BlockAction<ButtonAction>>({ type: 'block_actions', action_id: APPROVAL_ACTION_IDS.retry }, async ({ ack, body }) => {
    await ack();
    const { channel, threadTs } = clickOrigin(body);
    const teamId = body.team?.id ?? body.user.team_id;
    if (!channel || !threadTs || !teamId) return;
    const item = { kind: 'retry' as const, userId: body.user.id, teamId, channel, threadTs };
    try {
      await worker.submit(threadKeyOf(item), item);
    } catch {
      // Usually Redis being unreachable: say so rather than leave the click unanswered.
      await tellPrivately(messenger, body, ':warning: I could not queue the retry, so nothing ran. Please try again in a moment.');
    }
  });
}
