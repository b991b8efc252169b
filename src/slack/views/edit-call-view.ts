import type { types } from '@slack/bolt';
import { currentVersion } from '../../approvals/input-version.js';
import type { PendingCall, PendingStep } from '../../approvals/pending-step.js';
import { truncateText } from '../blocks/limits.js';
import { userMention } from '../format/mrkdwn-tokens.js';
import { untrustedTextToMrkdwn } from '../format/untrusted-text.js';
import { modalView } from '../modals/modal-view.js';
import type { SchemaForm } from '../modals/schema-form.js';

export const EDIT_CALL_CALLBACK_ID = 'countersign_edit_call';

export function editCallView(options: { step: PendingStep; call: PendingCall; form: SchemaForm; privateMetadata: string }): types.ModalView {
  const shown = currentVersion(options.call);
  const required = shown?.policy.required ?? 1;
  const next = (shown?.number ?? 0) + 2;
  // Under a quorum an edit cannot run on its own: say so before the approver submits.
  const outcome =
    required > 1
      ? `Submitting makes these values version ${next}: earlier approvals stop counting, yours counts if you may approve it, and it runs once ${required} people have approved version ${next}.`
      : 'Submitting approves the call with these values, if you may approve it.';
  const intro: types.KnownBlock = {
    type: 'context',
    elements: [
      {
        type: 'mrkdwn',
        text: `Editing *${untrustedTextToMrkdwn(truncateText(options.call.toolName, 100))}* requested by ${userMention(options.step.requesterId)}. ${outcome} The model is told what you changed.`,
        verbatim: true,
      },
    ],
  };
  return modalView({
    callbackId: EDIT_CALL_CALLBACK_ID,
    title: 'Edit and approve',
    submitLabel: required > 1 ? 'Submit & approve' : 'Approve & run',
    closeLabel: 'Cancel',
    privateMetadata: options.privateMetadata,
    blocks: [intro, ...options.form.blocks],
  }) as types.ModalView;
}

/**
 * A refusal shown in the open form. Slack can only show errors under input blocks; a form with no
 * input (a tool without parameters) gets the message as an updated view instead.
 */
export function formErrors(options: { fields: ReadonlyArray<{ blockId: string; control: { kind: string } }>; message: string }) {
  const first = options.fields.find((field) => field.control.kind !== 'group');
  if (first) return { response_action: 'errors' as const, errors: { [first.blockId]: options.message } };
  return {
    response_action: 'update' as const,
    view: {
      type: 'modal' as const,
      title: { type: 'plain_text' as const, text: 'Not changed' },
      close: { type: 'plain_text' as const, text: 'Close' },
      blocks: [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text: options.message } }],
    },
  };
}
