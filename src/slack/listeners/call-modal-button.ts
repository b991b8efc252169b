import type { App, BlockAction, ButtonAction, types } from '@slack/bolt';
import type { Logger } from 'pino';
import { appendQuietly, type AuditLog } from '../../audit/audit-log.js';
import { fromThisCard } from '../../approvals/card-routing.js';
import type { CallDecider } from '../../approvals/decide-call.js';
import { wrongCardText } from '../../approvals/wrong-card-text.js';
import { currentVersion } from '../../approvals/input-version.js';
import type { PendingCall, PendingStep } from '../../approvals/pending-step.js';
import { staleVersionText } from '../../approvals/transitions/call-action.js';
import type { ThreadMessenger } from '../../conversation/thread-messenger.js';
import type { StateStore } from '../../store/state-store.js';
import { decodeApprovalActionValue, encodeCallFormMetadata } from '../blocks/action-ids.js';
import { createOrganisationMembership, type OrganisationMembership } from '../organisation-membership.js';
import { actorOf, clickOrigin, tellPrivately } from './approval-actions.js';
import { membershipRefusal } from './membership-refusal.js';
import { isUnreadable, readCall, type ReadCallLookup } from './read-call.js';

export interface CallModalContext {
  step: PendingStep;
  /** The call as the card shows it now: its input and policy are those of the current version. */
  call: PendingCall;
  userId: string;
  /** The call's ids, the version the card showed and the channel: the state stays in the store. */
  privateMetadata: string;
}

/**
 * What a button's `view` gives: the modal; a sentence telling the clicker privately why there is
 * none; or `refused`, when the clicker may not take the action the form is for (someone else's
 * question): told the same way, and audited as `refusalAudit` says, as a refused Approve is.
 */
export type CallModal = types.ModalView | string | { refused: { code: string; reason: string } };

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
    /**
     * Forms that act (edit, deny, grant, answer) name the action: a click on them refused here gets
     * an `action-refused` record, as the same click on Approve would. Read-only modals leave it out.
     */
    refusalAudit?: { audit: AuditLog; action: string };
    /**
     * Forms that act: a click refused because the card should no longer show the button (decided,
     * closed, edited since) draws the card as stored, as the same click on Approve would
     * (`CallDecider.showIfOutdated`), so a card its drawer left "waiting" heals at any of its buttons.
     */
    decider?: Pick<CallDecider, 'showIfOutdated'>;
    view: (context: CallModalContext) => CallModal | Promise<CallModal>;
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
    // Told privately, and for a form that acts, audited and its outdated card drawn as a refused Approve's are.
    const refuse = async (refusal: { code: string; reason: string; teamId?: string }) => {
      const told = tellPrivately(messenger, body, refusal.reason);
      const healed = step && options.decider?.showIfOutdated(step, refusal.code);
      if (!options.refusalAudit) {
        await Promise.all([told, healed]);
        return;
      }
      const { audit, action: actionName } = options.refusalAudit;
      const event = {
        type: 'action-refused',
        ...(refusal.teamId ? { teamId: refusal.teamId } : {}),
        // The step's channel, so the refusal goes to that channel's shard (see the audit log).
        ...(step ? { channel: step.channel } : {}),
        stepId: reference.stepId,
        approvalId: reference.approvalId,
        ...(call ? { toolName: call.toolName } : {}),
        userId: body.user.id,
        action: actionName,
        code: refusal.code,
        reason: refusal.reason,
      } as const;
      await Promise.all([told, healed, appendQuietly(audit, event, logger)]);
    };
    // Redis could not be read: nothing was judged, so there is nothing to audit (nor a way to).
    if (isUnreadable(lookup)) return tellPrivately(messenger, body, lookup.message);
    if (!step || !call || (!lookup.open && !options.allowClosed)) return refuse({ ...closedRefusal(lookup), ...(step ? { teamId: step.teamId } : {}) });
    const { channel, messageTs } = clickOrigin(body);
    const { origin } = await actorOf({ body, channel, ...(messageTs === undefined ? {} : { messageTs }), membership, client });
    // Recorded in the request's workspace, as a refused Approve is, whichever workspace the click came from.
    const teamId = step.teamId;
    if (origin.teamId !== step.teamId) return refuse({ teamId, code: 'wrong-workspace', reason: 'This request belongs to another channel, so nothing changed.' });
    if (!fromThisCard(step, origin)) return refuse({ teamId, code: 'wrong-channel', reason: wrongCardText(step, { channel: origin.channel, userId: body.user.id }) });
    // A form opened by someone who may not act would only be refused when submitted.
    const outsider = membershipRefusal(origin.membership);
    if (outsider) return refuse({ teamId, ...outsider });
    // Buttons without a version (questions, older cards) showed the model's input, as for Approve.
    const cardVersion = reference.version ?? 0;
    const current = currentVersion(call);
    if (options.onlyForCurrentInput && current && current.number !== cardVersion) return refuse({ teamId, code: 'stale', reason: staleVersionText(current) });
    const shown = callAsShown(call);
    // The form remembers the card it was opened from (the thread or a copy) and the version that
    // card showed, so its submit is judged as that click would be: a form opened from #approvals
    // does not count as the thread, and one opened from a card older than an edit is stale. Anyone
    // can rewrite it, so its claim to the thread is checked again at submit (`formChannel`).
    const privateMetadata = encodeCallFormMetadata({ stepId: step.stepId, approvalId: call.approvalId, version: cardVersion, channel: origin.channel ?? step.channel });
    const view = await options.view({ step, call: shown, userId: body.user.id, privateMetadata });
    if (typeof view === 'string') return tellPrivately(messenger, body, view);
    if ('refused' in view) return refuse({ teamId, ...view.refused });
    try {
      await client.views.open({ trigger_id: body.trigger_id, view });
    } catch {
      await tellPrivately(messenger, body, `Slack could not open this in time. Please click *${options.buttonLabel}* again.`);
    }
  });
}

/** Why a click on a call that cannot be decided any more is refused, in the codes a refused Approve gets. */
function closedRefusal(lookup: ReadCallLookup): { code: string; reason: string } {
  const { step, call } = lookup;
  const reason = lookup.open ? '' : lookup.message;
  if (!step || !call) return { code: 'not-found', reason };
  return { code: Object.hasOwn(step.decisions, call.approvalId) ? 'already-decided' : 'closed', reason };
}
