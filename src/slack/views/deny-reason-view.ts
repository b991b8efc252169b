import type { types } from '@slack/bolt';
import type { PendingCall } from '../../approvals/pending-step.js';
import { truncateText } from '../blocks/limits.js';
import { untrustedTextToMrkdwn } from '../format/untrusted-text.js';

export const DENY_REASON_CALLBACK_ID = 'countersign_deny_reason';
export const DENY_REASON_BLOCK_ID = 'reason';
const DENY_REASON_ACTION_ID = 'value';
/** The model reads the reason; a paragraph is plenty and keeps the history small. */
export const DENY_REASON_MAX_LENGTH = 500;

export function denyReasonView({ call, privateMetadata }: { call: PendingCall; privateMetadata: string }): types.ModalView {
  return {
    type: 'modal',
    callback_id: DENY_REASON_CALLBACK_ID,
    private_metadata: privateMetadata,
    title: { type: 'plain_text', text: 'Deny with reason' },
    submit: { type: 'plain_text', text: 'Deny' },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks: [
      {
        type: 'section',
        text: { type: 'mrkdwn', text: `Deny *${untrustedTextToMrkdwn(truncateText(call.toolName, 100))}*. The reason is shown on the card and passed to the model.`, verbatim: true },
      },
      {
        type: 'input',
        block_id: DENY_REASON_BLOCK_ID,
        optional: true,
        label: { type: 'plain_text', text: 'Reason' },
        element: {
          type: 'plain_text_input',
          action_id: DENY_REASON_ACTION_ID,
          multiline: true,
          max_length: DENY_REASON_MAX_LENGTH,
          placeholder: { type: 'plain_text', text: 'e.g. wrong namespace; use staging first' },
        },
      },
    ],
  };
}

/** The reason from a submitted view, trimmed; undefined when left empty. */
export function submittedDenyReason(stateValues: Record<string, Record<string, { value?: string | null }>>): string | undefined {
  const value = stateValues[DENY_REASON_BLOCK_ID]?.[DENY_REASON_ACTION_ID]?.value;
  const reason = typeof value === 'string' ? value.trim().slice(0, DENY_REASON_MAX_LENGTH) : '';
  return reason === '' ? undefined : reason;
}
