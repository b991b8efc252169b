import { randomUUID } from 'node:crypto';
import type { App, ViewSubmitAction } from '@slack/bolt';
import type { Logger } from 'pino';
import type { CallDecider } from '../../approvals/decide-call.js';
import { findCall } from '../../approvals/find-call.js';
import { grantAuditEvent, type Grant } from '../../approvals/grant.js';
import { appendQuietly, type AuditLog } from '../../audit/audit-log.js';
import type { ThreadMessenger } from '../../conversation/thread-messenger.js';
import type { StateStore } from '../../store/state-store.js';
import { APPROVAL_ACTION_IDS, decodeApprovalActionValue } from '../blocks/action-ids.js';
import { GRANT_CALLBACK_ID, grantView, submittedGrantChoice } from '../views/grant-view.js';
import { registerCallModalButton } from './call-modal-button.js';

export interface GrantApprovalOptions {
  store: StateStore;
  decider: CallDecider;
  messenger: ThreadMessenger;
  audit: AuditLog;
  logger: Logger;
  now: () => number;
}

/**
 * "Approve & allow…": approves the call (under the same authorization as Approve) and records a
 * bounded, revocable grant for later matching calls. The grant exists only if the approval did.
 */
export function registerGrantApproval(app: App, { store, decider, messenger, audit, logger, now }: GrantApprovalOptions): void {
  registerCallModalButton(app, {
    actionId: APPROVAL_ACTION_IDS.grant,
    buttonLabel: 'Approve & allow…',
    store,
    messenger,
    view: ({ call, privateMetadata }) =>
      call.policy?.grants === 'forbidden' ? 'The policy does not allow grants for this tool.' : grantView({ call, privateMetadata }),
  });

  app.view<ViewSubmitAction>(GRANT_CALLBACK_ID, async ({ ack, body, view }) => {
    const reference = decodeApprovalActionValue(view.private_metadata);
    const lookup = reference ? await findCall(store, reference) : undefined;
    const refuse = (message: string) => ack({ response_action: 'errors', errors: { scope: message } });
    if (!reference || !lookup?.call || !lookup.step) return refuse('This approval request is no longer open.');
    const choice = submittedGrantChoice(view.state.values as never, lookup.call);
    if (!choice) return refuse('Choose where and for how long.');
    if (lookup.call.policy?.grants === 'forbidden') return refuse('The policy does not allow grants for this tool.');
    const outcome = await decider.record({ ...reference, userId: body.user.id, outcome: 'approved' });
    if (!outcome.recorded) return refuse(outcome.message);
    await ack();
    const { step, call } = lookup;
    const createdAt = now();
    const grant: Grant = {
      grantId: randomUUID().replaceAll('-', '').slice(0, 16),
      teamId: step.teamId,
      channel: step.channel,
      scope: choice.scope,
      ...(choice.scope === 'thread' ? { threadTs: step.threadTs } : {}),
      toolName: call.toolName,
      identicalArgumentsOnly: choice.identicalArgumentsOnly,
      input: call.input,
      evaluation: call.policy!,
      grantedBy: body.user.id,
      createdAt,
      expiresAt: createdAt + choice.hours * 60 * 60 * 1000,
    };
    try {
      await store.saveGrant(grant);
      await appendQuietly(audit, grantAuditEvent('grant-created', grant, grant.grantedBy), logger);
    } catch (error) {
      logger.error({ event: 'grant-save-failed', err: error }, 'could not save grant');
      await messenger.postEphemeral({ channel: step.channel, userId: body.user.id, threadTs: step.threadTs, text: ':warning: The call was approved, but the grant could not be saved; later calls will ask again.' }).catch(() => {});
    }
    await decider.publish(outcome);
  });
}
