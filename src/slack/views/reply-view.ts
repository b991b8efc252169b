import type { types } from '@slack/bolt';
import type { PendingCall } from '../../approvals/pending-step.js';
import { fitRenderedText } from '../blocks/fit-rendered-text.js';
import { untrustedTextToMrkdwn } from '../format/untrusted-text.js';
import { modalView } from '../modals/modal-view.js';
import type { SchemaForm } from '../modals/schema-form.js';

export const REPLY_CALLBACK_ID = 'countersign_reply';
const QUESTION_MAX_LENGTH = 2900;

/** The answer form of an `ask_user` question, generated from its answer schema like the Edit form. */
export function replyView(options: { call: PendingCall; form: SchemaForm; privateMetadata: string }): types.ModalView {
  const question = (options.call.input as { question?: unknown }).question;
  const text = fitRenderedText({ text: typeof question === 'string' ? question : '', maxLength: QUESTION_MAX_LENGTH, render: untrustedTextToMrkdwn }).text;
  return modalView({
    callbackId: REPLY_CALLBACK_ID,
    title: 'Reply',
    submitLabel: 'Send answer',
    closeLabel: 'Cancel',
    privateMetadata: options.privateMetadata,
    blocks: [{ type: 'section', text: { type: 'mrkdwn', text: text || '_No question text_', verbatim: true } }, ...options.form.blocks],
  }) as types.ModalView;
}
