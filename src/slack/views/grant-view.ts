import type { types } from '@slack/bolt';
import { GRANT_HOURS, type GrantChoice } from '../../approvals/grant.js';
import type { PendingCall, PendingStep } from '../../approvals/pending-step.js';
import { fitRenderedText } from '../blocks/fit-rendered-text.js';
import { elisionNote } from '../blocks/elision-note.js';
import { displayArguments } from '../blocks/format-arguments.js';
import { truncateText } from '../blocks/limits.js';
import { codeBlock } from '../format/code-block.js';
import { untrustedTextToMrkdwn } from '../format/untrusted-text.js';

export const GRANT_CALLBACK_ID = 'countersign_grant';
const SCOPE_BLOCK = 'scope';
const DURATION_BLOCK = 'duration';
const IDENTICAL_BLOCK = 'identical';
const VALUE = 'value';
/** Room for the input in one section (3,000 characters) with its heading, fence and note. */
const INPUT_MAX_LENGTH = 2_500;
export type { GrantChoice };

/**
 * `call` as the card showed it: the form shows the input the approval is for. The grant covers the
 * request's thread or channel, which the options name: opened from a copy in #approvals or a DM,
 * "this channel" would be the copy's.
 */
export function grantView({ step, call, privateMetadata }: { step: Pick<PendingStep, 'channel'>; call: PendingCall; privateMetadata: string }): types.ModalView {
  const identicalOnly = call.policy?.grants === 'identicalArguments';
  const option = (text: string, value: string) => ({ text: { type: 'plain_text' as const, text }, value });
  // mrkdwn, so Slack shows the channel's name.
  const scope = (text: string, value: string) => ({ text: { type: 'mrkdwn' as const, text }, value });
  const scopes = [scope(`The thread in <#${step.channel}>`, 'thread'), scope(`All of <#${step.channel}>`, 'channel')];
  const durations = GRANT_HOURS.map((hours) => option(`${hours} hour${hours === 1 ? '' : 's'}`, String(hours)));
  const tool = untrustedTextToMrkdwn(truncateText(call.toolName, 100));
  return {
    type: 'modal',
    callback_id: GRANT_CALLBACK_ID,
    private_metadata: privateMetadata,
    title: { type: 'plain_text', text: 'Approve and allow' },
    submit: { type: 'plain_text', text: 'Approve & allow' },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks: [
      {
        type: 'section',
        text: { type: 'mrkdwn', text: `Approve *${tool}* now, and let later *${tool}* calls run without a card where and for as long as you choose. The grant is listed and can be revoked with \`/countersign grants\`.` },
      },
      inputSection(call.input),
      { type: 'input', block_id: SCOPE_BLOCK, label: { type: 'plain_text', text: 'Where' }, element: { type: 'radio_buttons', action_id: VALUE, options: scopes, initial_option: scopes[0]! } },
      { type: 'input', block_id: DURATION_BLOCK, label: { type: 'plain_text', text: 'For how long' }, element: { type: 'static_select', action_id: VALUE, options: durations, initial_option: durations[0]! } },
      identicalOnly
        ? { type: 'context', elements: [{ type: 'mrkdwn', text: 'The policy allows grants only for calls with identical arguments.' }] }
        : {
            type: 'input',
            block_id: IDENTICAL_BLOCK,
            optional: true,
            label: { type: 'plain_text', text: 'Arguments' },
            element: { type: 'checkboxes', action_id: VALUE, options: [option('Only when the arguments are identical to this call', 'identical')] },
          },
    ],
  };
}

/** The input approved now, so the approver sees what they allow without going back to the card. */
function inputSection(input: unknown): types.SectionBlock {
  const displayed = displayArguments(input);
  const fitted = fitRenderedText({ text: displayed.text, maxLength: INPUT_MAX_LENGTH, render: untrustedTextToMrkdwn });
  const fenced = codeBlock(fitted.text);
  const note = fitted.omittedCharacters > 0 ? `\n_(truncated, ${fitted.omittedCharacters.toLocaleString('en-US')} more characters)_` : '';
  const warning = elisionNote(displayed.elided);
  return { type: 'section', text: { type: 'mrkdwn', text: `Input approved now:\n${warning === undefined ? '' : `${warning}\n`}${fenced}${note}`, verbatim: true } };
}

/** The choice from a submitted grant form; values come from Slack, so anything unexpected is refused. */
export function submittedGrantChoice(stateValues: Record<string, Record<string, { selected_option?: { value?: string } | null; selected_options?: Array<{ value?: string }> | null }>>, call: PendingCall): GrantChoice | undefined {
  const scope = stateValues[SCOPE_BLOCK]?.[VALUE]?.selected_option?.value;
  const hours = Number(stateValues[DURATION_BLOCK]?.[VALUE]?.selected_option?.value);
  const identical = (stateValues[IDENTICAL_BLOCK]?.[VALUE]?.selected_options ?? []).some((selected: { value?: string }) => selected.value === 'identical');
  if ((scope !== 'thread' && scope !== 'channel') || !(GRANT_HOURS as readonly number[]).includes(hours)) return undefined;
  return { scope, hours, identicalArgumentsOnly: identical || call.policy?.grants === 'identicalArguments' };
}
