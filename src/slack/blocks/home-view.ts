import type { types } from '@slack/bolt';
import type { AwaitingCall } from '../../approvals/awaiting-user.js';
import type { Grant } from '../../approvals/grant.js';
import { undecidedCalls, type PendingStep } from '../../approvals/pending-step.js';
import { describeApprovers } from '../../approvals/policy/describe-approvers.js';
import type { DecisionEvent } from '../../audit/audit-event.js';
import { ZERO_WIDTH_SPACE } from '../format/escape-mrkdwn.js';
import { actorMention, channelMention, slackDate, userMention } from '../format/mrkdwn-tokens.js';
import { untrustedTextToMrkdwn } from '../format/untrusted-text.js';
import { encodeApprovalActionValue, HOME_ACTION_IDS } from './action-ids.js';
import { fitRenderedText } from './fit-rendered-text.js';
import { elisionNote } from './elision-note.js';
import { displayArguments } from './format-arguments.js';
import { SLACK_LIMITS, truncateText } from './limits.js';
import { grantBlock } from './grant-block.js';
import { lineSections } from './line-sections.js';
import { truncationNote } from './truncation-note.js';

type KnownBlock = types.KnownBlock;

/** A list as read (capped) and how many there were in all, for "and N more". */
export interface Listed<T> {
  items: T[];
  total: number;
}

export interface HomeContent {
  /** Calls the viewer may approve now, each with a link to its card when Slack gave one. */
  waiting: Listed<AwaitingCall & { link?: string }>;
  /** Open requests the viewer made. */
  requests: Listed<{ step: PendingStep; link?: string }>;
  /** The viewer's latest decisions, newest first. */
  decisions: DecisionEvent[];
  /** The viewer's live grants, across channels. */
  grants: Listed<Grant>;
  /** The viewer's channels could not be read: nothing is shown as waiting rather than too much. */
  channelsUnknown?: boolean;
  /** The outcome of the viewer's last click, shown on top (a Home tab has no ephemeral messages). */
  notice?: string;
  now: number;
}

/** Per list; with two blocks per waiting call the view stays far below the 100 blocks a Home tab holds. */
export const HOME_LIST_LIMITS = { waiting: 15, requests: 10, decisions: 10, grants: 10 } as const;
const ARGUMENTS_MAX_LENGTH = 600;
const TOOL_NAME_MAX_LENGTH = 100;
const NOTICE_MAX_LENGTH = 2000;
/** In the one-line lists, short enough that ten decision lines fit a section's 3,000 characters. */
const LINE_TOOL_MAX_LENGTH = 60;
const LINE_TOOLS_MAX_LENGTH = 120;
const REASON_MAX_LENGTH = 100;

/**
 * The App Home tab: what waits for the viewer (Approve / Deny, View full input when the input was
 * cut, and a link to the card for Edit, reasons and grants), their open requests, their recent
 * decisions and their grants with Revoke.
 * Pure; every model-supplied string is escaped and fitted as on the card.
 */
export function buildHomeView(content: HomeContent): types.HomeView {
  const blocks: KnownBlock[] = [];
  if (content.notice) blocks.push(section(truncateText(content.notice, NOTICE_MAX_LENGTH)), { type: 'divider' });

  blocks.push(header(`Waiting for you (${content.waiting.total})`));
  if (content.channelsUnknown) blocks.push(context(':warning: Could not read which channels you are in just now, so nothing is listed. Open the Home tab again in a minute.'));
  else if (content.waiting.total === 0) blocks.push(context('Nothing waits for your approval.'));
  for (const item of content.waiting.items.slice(0, HOME_LIST_LIMITS.waiting)) blocks.push(...waitingBlocks(item));
  blocks.push(...more(content.waiting, HOME_LIST_LIMITS.waiting));

  blocks.push({ type: 'divider' }, header(`Your requests (${content.requests.total})`));
  const requests = content.requests.items.slice(0, HOME_LIST_LIMITS.requests).map(requestLine);
  // Ten lines with permalinks and MCP tool names pass one section's 3,000 characters, and Slack then
  // refuses the whole view. A section per line at most keeps the view far below Home's 100 blocks.
  blocks.push(...(requests.length > 0 ? lineSections({ lines: requests, maxBlocks: HOME_LIST_LIMITS.requests + 1 }) : [context('None of your requests is waiting.')]));
  blocks.push(...more(content.requests, HOME_LIST_LIMITS.requests));

  blocks.push({ type: 'divider' }, header('Your recent decisions'));
  const decisions = content.decisions.slice(0, HOME_LIST_LIMITS.decisions).map(decisionLine);
  blocks.push(decisions.length > 0 ? section(decisions.join('\n')) : context('No decisions of yours in the audit log lately.'));

  blocks.push({ type: 'divider' }, header(`Your grants (${content.grants.total})`));
  if (content.grants.total === 0) blocks.push(context('You have no active grants.'));
  for (const grant of content.grants.items.slice(0, HOME_LIST_LIMITS.grants)) blocks.push(grantBlock({ grant, actionId: HOME_ACTION_IDS.revokeGrant, showChannel: true }));
  blocks.push(...more(content.grants, HOME_LIST_LIMITS.grants));

  blocks.push(context(`Updated ${slackDate({ epochMilliseconds: content.now })} · open this tab again to refresh`));
  return { type: 'home', blocks };
}

/**
 * The Home tab when what it lists could not be read, published only to carry the outcome of a click
 * that was recorded anyway: the person must learn it, and the lists are not shown rather than shown
 * stale (the old view would still offer Approve on a call already decided).
 */
export function buildUnreadHomeView({ notice, now }: { notice: string; now: number }): types.HomeView {
  return {
    type: 'home',
    blocks: [
      section(truncateText(notice, NOTICE_MAX_LENGTH)),
      { type: 'divider' },
      context(`:warning: I could not read the rest of your Home tab just now (${slackDate({ epochMilliseconds: now })}). Open this tab again in a minute.`),
    ],
  };
}

function waitingBlocks({ step, call, version, link }: AwaitingCall & { link?: string }): KnownBlock[] {
  const tool = fitUntrusted(oneLine(call.toolName) || 'unnamed tool', TOOL_NAME_MAX_LENGTH);
  const edited = version.number > 0 ? ` · version ${version.number + 1}, edited by ${version.editedBy ? userMention(version.editedBy) : 'someone'}` : '';
  // The model orders the keys: what decides the call may come after the cut, so a cut says so.
  const displayed = displayArguments(version.input);
  const shownArguments = fitRenderedText({ text: displayed.text, maxLength: ARGUMENTS_MAX_LENGTH, render: untrustedTextToMrkdwn });
  // Parts no view can show are said above the input, and offer View full input as a cut does.
  const warning = elisionNote(displayed.elided);
  const truncated = shownArguments.omittedCharacters > 0 || warning !== undefined;
  const lines = [
    `*${tool}* in ${channelMention(step.channel)} · requested by ${actorMention(step.requesterId)} ${slackDate({ epochMilliseconds: step.createdAt })}${edited}`,
    `_Approvers: ${describeApprovers(version.policy)}_${step.expiresAt === undefined ? '' : ` · expires ${slackDate({ epochMilliseconds: step.expiresAt })}`}`,
    ...(warning === undefined ? [] : [warning]),
    codeBlock(shownArguments.text) + (shownArguments.omittedCharacters > 0 ? truncationNote(shownArguments.omittedCharacters) : ''),
  ];
  const value = encodeApprovalActionValue({ stepId: step.stepId, approvalId: call.approvalId, version: version.number });
  const label = (verb: string) => truncateText(`${verb} ${oneLine(call.toolName)}`, SLACK_LIMITS.buttonAccessibilityLabelLength);
  const elements: types.Button[] = [
    { type: 'button', action_id: HOME_ACTION_IDS.approve, style: 'primary', text: { type: 'plain_text', text: 'Approve' }, value, accessibility_label: label('Approve') },
    { type: 'button', action_id: HOME_ACTION_IDS.deny, style: 'danger', text: { type: 'plain_text', text: 'Deny' }, value, accessibility_label: label('Deny') },
  ];
  if (truncated) elements.push({ type: 'button', action_id: HOME_ACTION_IDS.viewInput, text: { type: 'plain_text', text: 'View full input' }, value, accessibility_label: label('View full input of') });
  if (link && link.length <= SLACK_LIMITS.buttonUrlLength) elements.push({ type: 'button', action_id: HOME_ACTION_IDS.openCard, text: { type: 'plain_text', text: 'Open the card' }, url: link });
  // Block ids name the call and its revision, so a re-published view never reuses one for other buttons.
  return [section(lines.join('\n')), { type: 'actions', block_id: `home_${step.stepId}_${call.approvalId}_r${step.revision}`.slice(0, SLACK_LIMITS.blockIdLength), elements }];
}

function requestLine({ step, link }: { step: PendingStep; link?: string }): string {
  const tools = fitUntrusted([...new Set(step.calls.map((call) => oneLine(call.toolName) || 'unnamed tool'))].join(', '), LINE_TOOLS_MAX_LENGTH);
  const waiting = undecidedCalls(step).length;
  const open = link ? ` · <${link}|open the card>` : '';
  return `• ${tools} in ${channelMention(step.channel)} ${slackDate({ epochMilliseconds: step.createdAt })} · ${waiting} waiting${open}`;
}

const OUTCOME_TEXT: Record<DecisionEvent['outcome'], string> = {
  approved: ':white_check_mark: Approved',
  denied: ':x: Denied',
  answered: ':speech_balloon: Answered',
  superseded: ':fast_forward: Superseded',
  expired: ':alarm_clock: Expired',
};

function decisionLine(event: DecisionEvent): string {
  const tool = fitUntrusted(oneLine(event.toolName) || 'unnamed tool', LINE_TOOL_MAX_LENGTH);
  const quorum = event.quorum && event.outcome === 'approved' && event.quorum.have < event.quorum.need ? ` (${event.quorum.have} of ${event.quorum.need})` : '';
  const reason = typeof event.reason === 'string' && event.reason.trim() !== '' ? ` · ${fitUntrusted(oneLine(event.reason).trim(), REASON_MAX_LENGTH)}` : '';
  return `• ${OUTCOME_TEXT[event.outcome] ?? 'Decided'}${quorum} *${tool}* ${slackDate({ epochMilliseconds: event.at })}${reason}`;
}

function more(list: Listed<unknown>, shown: number): KnownBlock[] {
  const hidden = list.total - Math.min(shown, list.items.length);
  return hidden > 0 ? [context(`…and ${hidden} more`)] : [];
}

function header(text: string): KnownBlock {
  return { type: 'header', text: { type: 'plain_text', text } };
}

function section(text: string): KnownBlock {
  return { type: 'section', text: { type: 'mrkdwn', text, verbatim: true } };
}

function context(text: string): KnownBlock {
  return { type: 'context', elements: [{ type: 'mrkdwn', text, verbatim: true }] };
}

/** Backticks at the edges would merge with the fence into a longer one. */
function codeBlock(content: string): string {
  return `\`\`\`${content.startsWith('`') ? ZERO_WIDTH_SPACE : ''}${content}${content.endsWith('`') ? ZERO_WIDTH_SPACE : ''}\`\`\``;
}

function fitUntrusted(text: string, maxLength: number): string {
  return fitRenderedText({ text, maxLength, render: untrustedTextToMrkdwn }).text;
}

function oneLine(text: unknown): string {
  return typeof text === 'string' ? text.replace(/\s+/g, ' ') : '';
}
