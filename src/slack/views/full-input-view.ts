import type { types } from '@slack/bolt';
import type { PendingCall } from '../../approvals/pending-step.js';
import { stringifyArguments } from '../blocks/format-arguments.js';
import { fitRenderedText } from '../blocks/fit-rendered-text.js';
import { SLACK_LIMITS, truncateText } from '../blocks/limits.js';
import { untrustedTextToMrkdwn } from '../format/untrusted-text.js';

/** Sections of code, each under the section limit with room for the fence. */
const CHUNK_LENGTH = SLACK_LIMITS.sectionTextLength - 20;
/** Far below the 100-block cap and the 250 kB view cap (about 120,000 characters shown). */
const MAX_CHUNKS = 40;

/**
 * A read-only modal with a call's whole input, for when the card had to cut it. The JSON is split
 * into code sections; anything beyond what one modal can hold is counted, not silently dropped.
 */
export function fullInputView({ call }: { call: PendingCall }): types.ModalView {
  let remaining = stringifyArguments(call.input);
  const blocks: types.KnownBlock[] = [
    {
      type: 'context',
      elements: [{ type: 'mrkdwn', text: `Full input of *${untrustedTextToMrkdwn(truncateText(call.toolName, 100))}*, exactly as the tool would receive it.`, verbatim: true }],
    },
  ];
  while (remaining.length > 0 && blocks.length <= MAX_CHUNKS) {
    const fitted = fitRenderedText({ text: remaining, maxLength: CHUNK_LENGTH, render: untrustedTextToMrkdwn, ellipsis: '' });
    const consumed = remaining.length - fitted.omittedCharacters;
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: `\`\`\`${fitted.text}\`\`\``, verbatim: true } });
    remaining = remaining.slice(consumed);
  }
  if (remaining.length > 0) {
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `_${remaining.length.toLocaleString('en-US')} more characters are not shown._` }] });
  }
  return { type: 'modal', title: { type: 'plain_text', text: 'Full input' }, close: { type: 'plain_text', text: 'Close' }, blocks };
}
