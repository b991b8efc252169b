import type { types } from '@slack/bolt';
import { SLACK_LIMITS, truncateText } from '../blocks/limits.js';

/** Slack's `view_too_large` limit. */
export const VIEW_BYTE_LIMIT = 250_000;

/**
 * A modal around `blocks`, with Slack's size rules applied: button and title texts are cut to 24
 * characters, while anything that would change meaning if cut (the metadata that identifies the
 * request, the block list, the callback id) throws instead, since that is a programming error.
 */
export function modalView({
  callbackId,
  title,
  submitLabel = 'Submit',
  closeLabel = 'Cancel',
  privateMetadata,
  blocks,
}: {
  callbackId: string;
  title: string;
  /** `null`: a read-only modal, with only the close button (nothing is submitted). */
  submitLabel?: string | null;
  closeLabel?: string;
  privateMetadata: string;
  blocks: types.KnownBlock[];
}): types.ModalView {
  if (callbackId.length === 0 || callbackId.length > SLACK_LIMITS.callbackIdLength) {
    throw new RangeError(`callback_id must be 1–${SLACK_LIMITS.callbackIdLength} characters, got ${callbackId.length}`);
  }
  if (privateMetadata.length > SLACK_LIMITS.privateMetadataLength) {
    throw new RangeError(`private_metadata is ${privateMetadata.length} characters (max ${SLACK_LIMITS.privateMetadataLength}); store the data and pass its id`);
  }
  if (blocks.length > SLACK_LIMITS.blocksPerModal) {
    throw new RangeError(`a modal holds at most ${SLACK_LIMITS.blocksPerModal} blocks, got ${blocks.length}`);
  }
  const view: types.ModalView = {
    type: 'modal',
    callback_id: callbackId,
    private_metadata: privateMetadata,
    title: buttonText(title, SLACK_LIMITS.modalTitleLength, 'Form'),
    ...(submitLabel === null ? {} : { submit: buttonText(submitLabel, SLACK_LIMITS.modalSubmitLength, 'Submit') }),
    close: buttonText(closeLabel, SLACK_LIMITS.modalCloseLength, 'Cancel'),
    blocks,
  };
  const bytes = Buffer.byteLength(JSON.stringify(view));
  if (bytes > VIEW_BYTE_LIMIT) throw new RangeError(`the view is ${bytes} bytes (Slack's limit is ${VIEW_BYTE_LIMIT})`);
  return view;
}

function buttonText(text: string, maxLength: number, fallback: string): types.PlainTextElement {
  const trimmed = text.trim();
  return { type: 'plain_text', text: truncateText(trimmed === '' ? fallback : trimmed, maxLength) };
}
