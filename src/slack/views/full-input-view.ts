import type { types } from '@slack/bolt';
import { isQuestion, type PendingCall } from '../../approvals/pending-step.js';
import { elisionNote } from '../blocks/elision-note.js';
import { displayArguments } from '../blocks/format-arguments.js';
import { fitRenderedText } from '../blocks/fit-rendered-text.js';
import { SLACK_LIMITS, truncateText } from '../blocks/limits.js';
import { CODE_BLOCK_OVERHEAD, codeBlock } from '../format/code-block.js';
import { untrustedTextToMrkdwn } from '../format/untrusted-text.js';
import { modalView } from '../modals/modal-view.js';

export const FULL_INPUT_CALLBACK_ID = 'countersign_full_input';
/** Sections of text, each under the section limit with room for the fence. */
const CHUNK_LENGTH = SLACK_LIMITS.sectionTextLength - CODE_BLOCK_OVERHEAD;
/** Far below the 100-block cap. */
const MAX_CHUNKS = 40;
/**
 * Bytes of sections one modal may hold: Slack counts the view in UTF-8 bytes (`view_too_large`
 * above 250 kB), and a CJK character is three bytes, so a character count alone overshoots.
 * Well under the limit, to leave room for the rest of the view.
 */
const SECTIONS_BYTE_BUDGET = 200_000;

/**
 * A read-only modal with a call's whole input, for when the card had to cut it: the JSON split into
 * code sections, or for an `ask_user` call the question itself. Anything beyond what one modal can
 * hold is counted, not silently dropped.
 */
export function fullInputView({ call }: { call: PendingCall }): types.ModalView {
  const toolName = untrustedTextToMrkdwn(truncateText(call.toolName, 100));
  const question = questionOf(call);
  const displayed = question === undefined ? displayArguments(call.input) : undefined;
  const { sections, omitted } = chunkSections(
    displayed !== undefined
      ? { text: displayed.text, wrap: codeBlock }
      : { text: question ?? '', wrap: (content) => content },
  );
  // "Exactly" only when nothing was elided; otherwise what was not shown, before the input.
  const warning = displayed === undefined ? undefined : elisionNote(displayed.elided);
  const intro =
    question !== undefined
      ? `The whole question from *${toolName}*:`
      : warning === undefined
        ? `Full input of *${toolName}*, exactly as the tool would receive it.`
        : `Full input of *${toolName}*, as far as it can be shown.\n${warning}`;
  const blocks: types.KnownBlock[] = [{ type: 'context', elements: [{ type: 'mrkdwn', text: intro, verbatim: true }] }, ...sections];
  if (omitted !== '') {
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `_${countCharacters(omitted).toLocaleString('en-US')} more characters are not shown._` }] });
  }
  return modalView({
    callbackId: FULL_INPUT_CALLBACK_ID,
    title: question === undefined ? 'Full input' : 'Full question',
    submitLabel: null,
    closeLabel: 'Close',
    privateMetadata: '',
    blocks,
  });
}

/** The question of an `ask_user` call, shown as text rather than as JSON with escaped newlines. */
function questionOf(call: PendingCall): string | undefined {
  if (!isQuestion(call) || typeof call.input !== 'object' || call.input === null) return undefined;
  const question = (call.input as { question?: unknown }).question;
  return typeof question === 'string' ? question : undefined;
}

/**
 * Splits untrusted text into mrkdwn sections until the block cap or the byte budget, measuring
 * each section as Slack receives it (JSON, UTF-8). Returns what did not fit.
 */
function chunkSections({ text, wrap }: { text: string; wrap: (mrkdwn: string) => string }): { sections: types.SectionBlock[]; omitted: string } {
  const sections: types.SectionBlock[] = [];
  let remaining = text;
  let bytes = 0;
  while (remaining.length > 0 && sections.length < MAX_CHUNKS) {
    const fitted = fitRenderedText({ text: remaining, maxLength: CHUNK_LENGTH, render: untrustedTextToMrkdwn, ellipsis: '' });
    if (fitted.omittedCharacters === remaining.length) break;
    const section: types.SectionBlock = { type: 'section', text: { type: 'mrkdwn', text: wrap(fitted.text), verbatim: true } };
    const sectionBytes = Buffer.byteLength(JSON.stringify(section));
    if (bytes + sectionBytes > SECTIONS_BYTE_BUDGET) break;
    bytes += sectionBytes;
    sections.push(section);
    remaining = remaining.slice(remaining.length - fitted.omittedCharacters);
  }
  return { sections, omitted: remaining };
}

/** Characters as a reader counts them: an emoji is one, not two UTF-16 units. */
function countCharacters(text: string): number {
  let count = 0;
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charCodeAt(index);
    const next = text.charCodeAt(index + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) index += 1;
    count += 1;
  }
  return count;
}
