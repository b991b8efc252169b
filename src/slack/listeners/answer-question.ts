import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import type { Logger } from 'pino';
import { CLICK_STORE_WAIT_MS, type CallDecider } from '../../approvals/decide-call.js';
import { isQuestion } from '../../approvals/pending-step.js';
import { mayAnswerQuestion } from '../../approvals/question-answerers.js';
import type { ThreadMessenger } from '../../conversation/thread-messenger.js';
import type { StateStore } from '../../store/state-store.js';
import { ANSWER_ACTION_PATTERN, APPROVAL_ACTION_IDS, decodeApprovalActionValue } from '../blocks/action-ids.js';
import { createOrganisationMembership, type OrganisationMembership } from '../organisation-membership.js';
import { actorOf, clickOrigin, tellPrivately } from './approval-actions.js';
import { isUnreadable, readCall } from './read-call.js';

export interface AnswerQuestionOptions {
  store: StateStore;
  decider: CallDecider;
  messenger: ThreadMessenger;
  logger: Logger;
  organisationMembership?: OrganisationMembership;
  /** How long a click waits for an unavailable store; default `CLICK_STORE_WAIT_MS`. */
  storeWaitMs?: number;
}

/** The person an `ask_user` question is for: whoever made the request. The server checks it again. */
export function mayAnswer(step: { requesterId: string }, userId: string): boolean {
  // Only opens the form: where the click came from is judged with the answer, on the server.
  return mayAnswerQuestion({ requesterId: step.requesterId, userId, inThreadChannel: true });
}

/**
 * Option buttons of an `ask_user` question (the chosen option's text is the answer) and its Decline
 * button (the model is told the person declined to answer).
 */
export function registerAnswerQuestion(app: App, { store, decider, messenger, logger, organisationMembership = createOrganisationMembership({ logger }), storeWaitMs = CLICK_STORE_WAIT_MS }: AnswerQuestionOptions): void {
  app.action<BlockAction<ButtonAction>>({ type: 'block_actions', action_id: ANSWER_ACTION_PATTERN }, async ({ ack, body, action, client }) => {
    await ack();
    const reference = decodeApprovalActionValue(action.value);
    const optionIndex = Number(ANSWER_ACTION_PATTERN.exec(action.action_id)?.[1]);
    if (!reference || !Number.isInteger(optionIndex)) return;
    // Waits out a reconnect as the decision that follows does: Slack already has the ack.
    const lookup = await readCall({ store, logger, reference, storeWaitMs });
    // Redis could not be read: nothing was judged, so there is nothing to audit.
    if (isUnreadable(lookup)) return tellPrivately(messenger, body, lookup.message);
    if (lookup.call && !isQuestion(lookup.call)) return;
    // The option text comes from the stored call, never from the click payload.
    const options = (lookup.call?.input as { options?: unknown } | undefined)?.options;
    const answer = Array.isArray(options) ? options[optionIndex] : undefined;
    if (lookup.open && typeof answer !== 'string') return;
    // A click on a question already answered or closed (or gone) goes to the decider all the same,
    // as a late Approve does: it refuses it, and the refusal is audited. A decision is final and a
    // step does not come back, so the decider cannot record the `null` of a call that is gone.
    const chosen = { kind: 'answer' as const, answer: typeof answer === 'string' ? answer : null };
    const outcome = await decider.record({ ...reference, ...(await actorOf({ body, channel: clickOrigin(body).channel, membership: organisationMembership, client })), action: chosen }, { storeWaitMs });
    if (!outcome.recorded) await tellPrivately(messenger, body, outcome.message);
    await decider.publish(outcome);
  });
  // A deny on a question: the server judges who may decline exactly as who may answer.
  app.action<BlockAction<ButtonAction>>({ type: 'block_actions', action_id: APPROVAL_ACTION_IDS.declineQuestion }, async ({ ack, body, action, client }) => {
    await ack();
    const reference = decodeApprovalActionValue(action.value);
    if (!reference) return;
    const { channel, messageTs } = clickOrigin(body);
    const actor = await actorOf({ body, channel, ...(messageTs === undefined ? {} : { messageTs }), membership: organisationMembership, client });
    const outcome = await decider.record({ stepId: reference.stepId, approvalId: reference.approvalId, ...actor, action: { kind: 'deny' } }, { storeWaitMs });
    if (!outcome.recorded) await tellPrivately(messenger, body, outcome.message);
    // Declined, but Redis's replicas did not confirm it yet.
    else if (outcome.notice) await tellPrivately(messenger, body, outcome.notice);
    await decider.publish(outcome);
  });
}
