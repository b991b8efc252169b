import type { App, BlockAction, ButtonAction, types } from '@slack/bolt';
import type { Logger } from 'pino';
import { fromThisCard } from '../../approvals/card-routing.js';
import { currentVersion } from '../../approvals/input-version.js';
import type { PendingCall, PendingStep } from '../../approvals/pending-step.js';
import { EXTERNAL_USER_TEXT, MEMBERSHIP_UNVERIFIED_TEXT, staleVersionText } from '../../approvals/transitions/call-action.js';
import type { ThreadMessenger } from '../../conversation/thread-messenger.js';
import type { StateStore } from '../../store/state-store.js';
import { decodeApprovalActionValue, encodeCallFormMetadata } from '../blocks/action-ids.js';
import { createOrganisationMembership, type OrganisationMembership } from '../organisation-membership.js';
import { actorOf, clickOrigin, tellPrivately } from './approval-actions.js';
import { readCall } from './read-call.js';

export interface CallModalContext {
  step: PendingStep;
  /** The call as the card shows it now: its input and policy are those of the current version. */
  call: PendingCall;
  userId: string;
  /** The call's ids, the version the card showed and the channel: the state stays in the store. */
  privateMetadata: string;
}

/**
 * The call as people are asked to approve it now: the newest version's input and policy. Modals
 * built from this show (and edit) what would run, not what the model first proposed.
 */
export function callAsShown(call: PendingCall): PendingCall {
  const version = currentVersion(call);
  return version ? { ...call, input: version.input, policy: version.policy } : call;
}

/**
 * A card button that opens a modal about one call (Edit, Deny with reason, Approve & allow, Reply,
 * View full input). The trigger id lives three seconds and is single use, so after `ack()` only
 * one store read (not waited on while Redis is down: the trigger would be gone) and the view build
 * happen before `views.open`. `view` returns the modal, or a sentence telling the clicker privately
 * why there is none. The modal's submit is judged again on the server against the version the card
 * showed; opening it only checks the click belongs to this step's workspace and channel, by someone
 * of its organisation, and, for a form that approves, that the card shows the current input.
 */
export function registerCallModalButton(
  app: App,
  options: {
    actionId: string;
    /** As on the button, for "click … again" when Slack was too slow. */
    buttonLabel: string;
    store: StateStore;
    messenger: ThreadMessenger;
    logger: Logger;
    organisationMembership?: OrganisationMembership;
    /** Read-only modals may open for decided calls too. */
    allowClosed?: boolean;
    /**
     * The form approves (Edit, Approve & allow): from a card older than the current input it does
     * not open, and the clicker is told why, as an Approve on that card is. Its submit would be
     * refused as stale anyway; refusing now spares filling in a form whose text does not say the
     * input is not the one the card showed.
     */
    onlyForCurrentInput?: boolean;
    view: (context: CallModalContext) => types.ModalView | string | Promise<types.ModalView | string>;
  },
): void {
  const { store, messenger, logger } = options;
  const membership = options.organisationMembership ?? createOrganisationMembership({ logger });
  app.action<BlockAction<ButtonAction>>({ type: 'block_actions', action_id: options.actionId }, async ({ ack, body, action, client }) => {
    await ack();
    const reference = decodeApprovalActionValue(action.value);
    if (!reference) return;
    const lookup = await readCall({ store, logger, reference });
    const { step, call } = lookup;
    if (!step || !call || (!lookup.open && !options.allowClosed)) return tellPrivately(messenger, body, lookup.open ? '' : lookup.message);
    const { channel, messageTs } = clickOrigin(body);
    const { origin } = await actorOf({ body, channel, ...(messageTs === undefined ? {} : { messageTs }), membership, client });
    if (origin.teamId !== step.teamId || !fromThisCard(step, origin)) return tellPrivately(messenger, body, 'This request belongs to another channel, so nothing changed.');
    // A form opened by someone who may not act would only be refused when submitted.
    if (origin.membership !== 'member') return tellPrivately(messenger, body, origin.membership === 'external' ? EXTERNAL_USER_TEXT : MEMBERSHIP_UNVERIFIED_TEXT);
    // Buttons without a version (questions, older cards) showed the model's input, as for Approve.
    const cardVersion = reference.version ?? 0;
    const current = currentVersion(call);
    if (options.onlyForCurrentInput && current && current.number !== cardVersion) return tellPrivately(messenger, body, staleVersionText(current));
    const shown = callAsShown(call);
    // The form remembers the card it was opened from (the thread or a copy) and the version that
    // card showed, so its submit is judged as that click would be: a form opened from #approvals
    // does not count as the thread, and one opened from a card older than an edit is stale.
    const privateMetadata = encodeCallFormMetadata({ stepId: step.stepId, approvalId: call.approvalId, version: cardVersion, channel: origin.channel ?? step.channel });
    const view = await options.view({ step, call: shown, userId: body.user.id, privateMetadata });
    if (typeof view === 'string') return tellPrivately(messenger, body, view);
    try {
      await client.views.open({ trigger_id: body.trigger_id, view });
    } catch {
      await tellPrivately(messenger, body, `Slack could not open this in time. Please click *${options.buttonLabel}* again.`);
    }
  });
}
