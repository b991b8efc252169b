import type { types } from '@slack/bolt';
import { COUNTERSIGN_ACTOR } from '../../agent/decision-messages.js';
import { copyCarriesCall, type CopyPlace, threadCallActionable, threadCardActionable } from '../../approvals/card-routing.js';
import { describeChanges, diffInputs } from '../../approvals/input-diff.js';
import { approvalsOf, approvedVersion, currentVersion } from '../../approvals/input-version.js';
import { approverMentions, describeApprovers } from '../../approvals/policy/describe-approvers.js';
import { callsOnStepLadder } from '../../approvals/policy/escalation-scope.js';
import { nextHopAt } from '../../approvals/policy/next-hop-at.js';
import { isQuestion, undecidedCalls, type Decision, type InputVersion, type PendingCall, type PendingStep } from '../../approvals/pending-step.js';
import { questionOptionsOf } from '../../approvals/question-options.js';
import { scheduleNameOf } from '../../conversation/schedule-actor.js';
import { CODE_BLOCK_OVERHEAD, codeBlock } from '../format/code-block.js';
import { actorMention, channelMention, slackDate, userMention } from '../format/mrkdwn-tokens.js';
import { revealInvisible } from '../format/reveal-invisible.js';
import { untrustedTextToMrkdwn } from '../format/untrusted-text.js';
import { ANSWER_ACTION_PREFIX, APPROVAL_ACTION_IDS, encodeApprovalActionValue } from './action-ids.js';
import { cardRoutingLine, type CardPlacement } from './card-routing-line.js';
import { fitRenderedText } from './fit-rendered-text.js';
import { elisionNote } from './elision-note.js';
import { displayArguments, stringifyArguments } from './format-arguments.js';
import { SLACK_LIMITS, truncateText } from './limits.js';

export { formatArguments, stringifyArguments, type FormattedArguments } from './format-arguments.js';

type KnownBlock = types.KnownBlock;

export interface ApprovalCard {
  /** Notification and fallback text. */
  text: string;
  blocks: KnownBlock[];
}

/** Slack rejects messages whose blocks hold more than ~12,000 characters; keep clear of it. */
export const APPROVAL_CARD_TEXT_BUDGET = 11_000;
/** Calls shown in full; any further calls are summarised in one line (they cannot fit 50 blocks). */
const MAX_SHOWN_CALLS = 10;
/** Each call's arguments (or question) get at least this much, however many calls share the budget. */
const MIN_ARGUMENTS_LENGTH = 200;
const TOOL_NAME_MAX_LENGTH = 100;
const DESCRIPTION_MAX_LENGTH = 240;
const REASON_MAX_LENGTH = 240;
const FALLBACK_NAMES_MAX_LENGTH = 1000;
const HEADER_TEXT = ':lock: Approval needed';
const QUESTION_HEADER_TEXT = ':speech_balloon: Your input is needed';
const QUESTION_MAX_LENGTH = 2000;
const ANSWER_MAX_LENGTH = 500;

/**
 * The approval card for one paused step: what each call would do, with Approve and Deny for every
 * undecided call and the outcome for decided ones. Pure: re-render it from the stored step after
 * every decision. All model-supplied text is escaped and fitted, so the card stays within Slack's
 * limits for any input.
 */
export function buildApprovalCard({ step, placement = 'thread', copy }: { step: PendingStep; placement?: CardPlacement; copy?: CopyPlace }): ApprovalCard {
  // A thread card whose rule sends the decision elsewhere only shows the state, once a copy exists.
  const actionable = placement === 'copy' || threadCardActionable(step);
  const routing = cardRoutingLine({ step, placement, actionable });
  // A copy carries the calls routed to it; the others wait in the thread and where their rules send them.
  const carried = placement === 'copy' && copy !== undefined ? step.calls.filter((call) => copyCarriesCall(step, call, copy)) : step.calls;
  const elsewhere = step.calls.length - carried.length;
  const shownCalls = carried.slice(0, MAX_SHOWN_CALLS);
  const hiddenCalls = carried.slice(MAX_SHOWN_CALLS);
  const waiting = step.phase === 'pending' ? undecidedCalls(step).length : 0;
  const expiry = step.expiresAt !== undefined && waiting > 0 ? ` · expires ${slackDate({ epochMilliseconds: step.expiresAt })}` : '';
  const summary = `Requested by ${actorMention(step.requesterId)} · ${slackDate({ epochMilliseconds: step.createdAt })} · ${statusText(step, waiting)}${expiry}${waiting > 0 ? escalationText(step) : ''}`;
  const hiddenSummary = hiddenCalls.length > 0 ? hiddenCallsText(step, hiddenCalls) : undefined;
  const elsewhereSummary = elsewhere > 0 ? `:link: ${elsewhere} more ${elsewhere === 1 ? 'call' : 'calls'} of this request ${elsewhere === 1 ? 'is' : 'are'} not sent here: see the thread` : undefined;
  const drafts = shownCalls.map((call, index) => draftCall(step, call, index, placement === 'copy' || threadCallActionable(step, call)));
  const header = step.calls.length > 0 && step.calls.every(isQuestion) ? QUESTION_HEADER_TEXT : HEADER_TEXT;
  const fixedLength = header.length + summary.length + routing.length + (hiddenSummary?.length ?? 0) + (elsewhereSummary?.length ?? 0) + sum(drafts.map((draft) => draft.fixedLength));
  const calls = Math.max(1, drafts.length);
  // An edit's change lines give way before any call's arguments go under their minimum: View full
  // input shows the version they describe. All of them when they fit, else an equal share each.
  const changesRoom = Math.max(0, APPROVAL_CARD_TEXT_BUDGET - fixedLength - calls * MIN_ARGUMENTS_LENGTH);
  const changesShare = sum(drafts.map((draft) => draft.changesLength(Number.POSITIVE_INFINITY))) <= changesRoom ? Number.POSITIVE_INFINITY : Math.floor(changesRoom / calls);
  const changesLength = sum(drafts.map((draft) => draft.changesLength(changesShare)));
  const share = Math.max(MIN_ARGUMENTS_LENGTH, Math.floor((APPROVAL_CARD_TEXT_BUDGET - fixedLength - changesLength) / calls));

  const blocks: KnownBlock[] = [
    { type: 'header', text: { type: 'plain_text', text: header, emoji: true } },
    contextBlock(summary),
    ...(routing === '' ? [] : [contextBlock(routing)]),
    ...drafts.flatMap((draft): KnownBlock[] => {
      const section = draft.section(share, changesShare);
      return [{ type: 'divider' }, { type: 'section', text: { type: 'mrkdwn', text: section.text, verbatim: true } }, draft.footer(section.truncated)];
    }),
  ];
  if (hiddenSummary !== undefined) blocks.push(contextBlock(hiddenSummary));
  if (elsewhereSummary !== undefined) blocks.push(contextBlock(elsewhereSummary));
  return { text: fallbackText(step, carried, waiting), blocks };
}

interface CallDraft {
  /**
   * Text length of everything but the arguments (or the question) and an edit's change lines, with
   * room for the truncation note and for the note that says how many changes are not listed.
   */
  fixedLength: number;
  /** Length the change lines take when given at most `room` characters (never more than `room`). */
  changesLength: (room: number) => number;
  /** `truncated`: the arguments, question or change lines were cut, or parts of the input cannot be shown. */
  section: (share: number, changesRoom: number) => { text: string; truncated: boolean };
  /** Buttons while undecided (with "View full input" when the arguments or question were cut), the outcome once decided. */
  footer: (truncated: boolean) => KnownBlock;
}

function draftCall(step: PendingStep, call: PendingCall, index: number, actionable: boolean): CallDraft {
  if (isQuestion(call)) return draftQuestion(step, call, index);
  const title = `*${fitUntrusted(toolNameOf(call), TOOL_NAME_MAX_LENGTH)}*`;
  const description = typeof call.description === 'string' ? fitUntrusted(call.description.trim(), DESCRIPTION_MAX_LENGTH) : '';
  const shown = shownVersion(step, call);
  const prefix = (changesRoom: number) => {
    const version = versionLine({ step, call, shown, changesRoom, offersFullInput: offersButtons(step, call, actionable) });
    return { text: `${[title, description, approversLine(step, call), version.text].filter((line) => line !== '').join('\n')}\n`, cut: version.cut };
  };
  const shortest = prefix(0).text.length;
  const input = shown?.input ?? call.input;
  const displayed = input === undefined ? undefined : displayArguments(input);
  const source = displayed?.text;
  // Above the input, where it is read first: parts the tool receives that no view can show.
  const warning = displayed === undefined ? undefined : elisionNote(displayed.elided);
  const warningLine = warning === undefined ? '' : `${warning}\n`;
  const argumentsOverhead = source === undefined ? NO_ARGUMENTS.length : warningLine.length + CODE_BLOCK_OVERHEAD + truncationNote(source.length).length;
  const footer = (truncated: boolean) => footerFor(step, call, index, truncated, actionable);

  return {
    fixedLength: shortest + argumentsOverhead + footer(true).textLength,
    changesLength: (room) => prefix(room).text.length - shortest,
    footer: (truncated) => footer(truncated).block,
    section(share, changesRoom) {
      const { text: head, cut } = prefix(changesRoom);
      if (source === undefined) return { text: head + NO_ARGUMENTS, truncated: cut };
      const sectionRoom = SLACK_LIMITS.sectionTextLength - head.length - argumentsOverhead;
      const fitted = fitRenderedText({ text: source, maxLength: Math.min(share, sectionRoom), render: untrustedTextToMrkdwn });
      const note = fitted.omittedCharacters > 0 ? truncationNote(fitted.omittedCharacters) : '';
      // Elided parts and unlisted changes offer View full input too: the modal shows the version.
      return { text: `${head}${warningLine}${codeBlock(fitted.text)}${note}`, truncated: cut || fitted.omittedCharacters > 0 || warning !== undefined };
    },
  };
}

const NO_ARGUMENTS = '_No arguments_';

/**
 * Who may decide (when the policy names anyone) and the quorum so far, for the version being
 * approved now. Written from the operator's config, not from model output, so group mentions are
 * meant: the card asks those people.
 */
function approversLine(step: PendingStep, call: PendingCall): string {
  const version = currentVersion(call);
  const policy = version?.policy ?? call.policy;
  const required = requiredOf(call);
  if (!policy || (required <= 1 && policy.approvers.every((approver) => approver.kind === 'channel'))) return '';
  const lines = [`_Approvers: ${describeApprovers({ ...policy, required })}_`];
  const approvals = version ? approvalsOf(step, call, version.number) : [];
  if (approvals.length > 0 && !decisionFor(step, call)) {
    const names = approvals.map((approval) => userMention(approval.userId)).join(', ');
    // An undecided call has not met its quorum, whatever one was recorded (a deploy may have raised it since).
    const count = approvals.length < required ? `${approvals.length} of ${required} approvals` : `${approvals.length} ${approvals.length === 1 ? 'approval' : 'approvals'} so far, more needed under the approval policy now in force`;
    lines.push(`:hourglass_flowing_sand: ${count}: ${names}`);
  }
  return lines.join('\n');
}

/** The quorum of the version to approve: the larger one a click counted under after a deploy raised it, else the card's. */
function requiredOf(call: PendingCall): number {
  const version = currentVersion(call);
  const policy = version?.policy ?? call.policy;
  return Math.max(policy?.required ?? 1, version?.requiredNow ?? 0);
}

/** The version whose input the card shows: the one that runs once approved, else the one to approve. */
function shownVersion(step: PendingStep, call: PendingCall): InputVersion | undefined {
  return approvedVersion(step, call) ?? currentVersion(call);
}

/**
 * For an input a human edited: which version this is, who wrote it and what changed, and, while it
 * waits, that approvals of earlier versions do not count for it. The change lines take at most
 * `changesRoom` characters (the card's budget); `cut` when some were left out for room, which then
 * offers View full input.
 */
function versionLine({ step, call, shown, changesRoom, offersFullInput }: { step: PendingStep; call: PendingCall; shown: InputVersion | undefined; changesRoom: number; offersFullInput: boolean }): { text: string; cut: boolean } {
  if (!shown || shown.number === 0) return { text: '', cut: false };
  const changes = describeChanges(diffInputs(call.input, shown.input));
  const lines = [`:pencil2: *Version ${shown.number + 1}*, edited by ${shown.editedBy ? userMention(shown.editedBy) : 'someone'} · ${slackDate({ epochMilliseconds: shown.at })}. Changed from the model's input:`];
  let room = changesRoom;
  for (const change of changes.slice(0, MAX_SHOWN_CHANGES)) {
    // Revealed as the input block reveals them: a change to a reordered value must not read harmlessly.
    const line = `• ${fitUntrusted(oneLine(revealInvisible(change)), CHANGE_MAX_LENGTH)}`;
    if (line.length + 1 > room) break;
    lines.push(line);
    room -= line.length + 1;
  }
  const listed = lines.length - 1;
  const cut = listed < Math.min(changes.length, MAX_SHOWN_CHANGES);
  if (listed < changes.length) lines.push(`• …and ${changes.length - listed} more ${changes.length - listed === 1 ? 'change' : 'changes'}${cut && offersFullInput ? ', see View full input' : ''}`);
  if (changes.length === 0) lines.push('• (back to the model\'s input)');
  const earlier = [...new Set((step.approvals?.[call.approvalId] ?? []).filter((approval) => approval.version !== shown.number).map((approval) => approval.userId))];
  if (earlier.length > 0 && !decisionFor(step, call)) {
    lines.push(`_Approvals of earlier versions (${earlier.map(userMention).join(', ')}) do not count for this one._`);
  }
  return { text: lines.join('\n'), cut };
}

/**
 * An `ask_user` call: the question, then option buttons or a Reply button and Decline, or the answer. The
 * question shares the card's budget like arguments do (ten questions of 2,000 characters would not
 * fit one message); a cut question says so and offers "View full input" while it waits.
 */
function draftQuestion(step: PendingStep, call: PendingCall, index: number): CallDraft {
  const input = (typeof call.input === 'object' && call.input !== null ? call.input : {}) as { question?: unknown };
  const question = typeof input.question === 'string' ? input.question : '';
  // The same options the Reply form and the decider go by: a card with them offers no Reply.
  const options = questionOptionsOf(call);
  // A scheduled turn's question is for anyone in its channel (named, as a copy elsewhere may show it): no person asked.
  const askedOf = scheduleNameOf(step.requesterId) === undefined ? userMention(step.requesterId) : `anyone in ${channelMention(step.channel)}`;
  const prefix = `*Question for ${askedOf}:*\n`;
  const questionOverhead = truncationNote(question.length).length;
  const sectionRoom = SLACK_LIMITS.sectionTextLength - prefix.length - questionOverhead;
  const footer = (truncated: boolean): { block: KnownBlock; textLength: number } => {
    const decision = decisionFor(step, call);
    if (decision !== undefined || step.phase !== 'pending') {
      const outcome =
        decision === undefined
          ? ':heavy_minus_sign: Closed without an answer'
          : decision.outcome === 'expired'
            ? `:alarm_clock: Expired without an answer · ${slackDate({ epochMilliseconds: decision.at })}`
            : decision.outcome === 'denied' && decision.userId !== COUNTERSIGN_ACTOR
              ? `:no_entry_sign: Declined by ${actorMention(decision.userId)} · ${slackDate({ epochMilliseconds: decision.at })}`
              : decisionText(decision, call);
      return { block: contextBlock(outcome), textLength: outcome.length };
    }
    const value = encodeApprovalActionValue({ stepId: step.stepId, approvalId: call.approvalId });
    const answerButtons =
      options.length > 0
        ? options.map((option, optionIndex) => ({
            type: 'button' as const,
            action_id: `${ANSWER_ACTION_PREFIX}${optionIndex}`,
            // Slack refuses a button without text; the answer is the stored option, whatever the label.
            text: { type: 'plain_text' as const, text: truncateText(option.trim() === '' ? '(blank)' : option, SLACK_LIMITS.buttonTextLength), emoji: true },
            value,
          }))
        : [{ type: 'button' as const, action_id: APPROVAL_ACTION_IDS.reply, style: 'primary' as const, text: { type: 'plain_text' as const, text: 'Reply', emoji: true }, value }];
    // A way out when the person cannot or will not answer (or the Reply form cannot take their answer).
    const declineButton = { type: 'button' as const, action_id: APPROVAL_ACTION_IDS.declineQuestion, text: { type: 'plain_text' as const, text: 'Decline', emoji: true }, value };
    const elements = [
      ...answerButtons,
      declineButton,
      ...(truncated ? [{ type: 'button' as const, action_id: APPROVAL_ACTION_IDS.viewInput, text: { type: 'plain_text' as const, text: 'View full input', emoji: true }, value }] : []),
    ];
    const revision = Number.isSafeInteger(step.revision) ? step.revision : 0;
    return {
      block: { type: 'actions', block_id: `countersign_call_${index}_r${revision}`, elements },
      textLength: elements.reduce((total, element) => total + element.text.text.length, 0),
    };
  };
  return {
    fixedLength: prefix.length + questionOverhead + footer(true).textLength,
    changesLength: () => 0,
    footer: (truncated) => footer(truncated).block,
    section(questionShare) {
      const fitted = fitRenderedText({ text: question, maxLength: Math.min(questionShare, QUESTION_MAX_LENGTH, sectionRoom), render: untrustedTextToMrkdwn });
      const truncated = fitted.omittedCharacters > 0;
      return { text: `${prefix}${fitted.text}${truncated ? truncationNote(fitted.omittedCharacters) : ''}`, truncated };
    },
  };
}

function truncationNote(omittedCharacters: number): string {
  return `\n_(truncated, ${omittedCharacters.toLocaleString('en-US')} more characters)_`;
}

/** Whether the call's footer is its buttons (View full input among them when something was cut), not an outcome or a pointer elsewhere. */
function offersButtons(step: PendingStep, call: PendingCall, actionable: boolean): boolean {
  return decisionFor(step, call) === undefined && step.phase === 'pending' && actionable;
}

function footerFor(step: PendingStep, call: PendingCall, index: number, truncated: boolean, actionable = true): { block: KnownBlock; textLength: number } {
  const decision = decisionFor(step, call);
  if (decision !== undefined || step.phase !== 'pending') {
    const text = decision === undefined ? ':heavy_minus_sign: Closed without a decision' : decisionText(decision, call, step);
    return { block: contextBlock(text), textLength: text.length };
  }
  if (!actionable) {
    const text = ':hourglass_flowing_sand: Waiting for a decision (see above for where)';
    return { block: contextBlock(text), textLength: text.length };
  }
  const version = currentVersion(call);
  const policy = version?.policy ?? call.policy;
  // Every button names the version on the card, so a click on a card older than an edit is refused.
  const value = encodeApprovalActionValue({ stepId: step.stepId, approvalId: call.approvalId, version: version?.number ?? 0 });
  const label = (verb: string): string => truncateText(`${verb} ${toolNameOf(call)}`, SLACK_LIMITS.buttonAccessibilityLabelLength);
  const button = (verb: string, actionId: string, style?: 'primary' | 'danger') => ({
    type: 'button' as const,
    action_id: actionId,
    ...(style ? { style } : {}),
    text: { type: 'plain_text' as const, text: verb, emoji: true },
    value,
    accessibility_label: label(verb),
  });
  const buttons = [
    button('Approve', APPROVAL_ACTION_IDS.approve, 'primary'),
    button('Edit', APPROVAL_ACTION_IDS.edit),
    button('Deny', APPROVAL_ACTION_IDS.deny, 'danger'),
    button('Deny with reason', APPROVAL_ACTION_IDS.denyWithReason),
    // A grant would let later calls skip a quorum, so only single-approver calls offer one.
    ...(policy && policy.grants !== 'forbidden' && requiredOf(call) <= 1 ? [button('Approve & allow…', APPROVAL_ACTION_IDS.grant)] : []),
    ...(truncated ? [button('View full input', APPROVAL_ACTION_IDS.viewInput)] : []),
  ];
  const revision = Number.isSafeInteger(step.revision) ? step.revision : 0;
  return {
    // The id changes with every revision: Slack advises new block ids when a message is updated.
    block: { type: 'actions', block_id: `countersign_call_${index}_r${revision}`, elements: buttons },
    textLength: buttons.reduce((total, element) => total + element.text.text.length, 0),
  };
}

function decisionFor(step: PendingStep, call: PendingCall): Decision | undefined {
  // `hasOwn`: an approval id such as "constructor" must not find Object.prototype members.
  return Object.hasOwn(step.decisions, call.approvalId) ? step.decisions[call.approvalId] : undefined;
}

/** Changes listed under an edited call; more would crowd the card, and the model gets all of them. */
const MAX_SHOWN_CHANGES = 6;
const CHANGE_MAX_LENGTH = 200;

function decisionText(decision: Decision, call: PendingCall, step?: PendingStep): string {
  const by = actorMention(decision.userId);
  const when = slackDate({ epochMilliseconds: decision.at });
  switch (decision.outcome) {
    case 'approved': {
      const approvers = (decision.approvedBy ?? [decision.userId]).map(actorMention).join(' and ');
      const runs = step && approvedVersion(step, call);
      if (!runs || runs.number === 0) return `:white_check_mark: Approved by ${approvers} · ${when}`;
      return `:white_check_mark: Approved by ${approvers} · ${when}. Runs version ${runs.number + 1}, edited by ${runs.editedBy ? userMention(runs.editedBy) : 'someone'} (shown above).`;
    }
    case 'denied': {
      // Revealed as arguments are: a reason reordered by a bidi override must not read as something else.
      const reason = typeof decision.reason === 'string' ? oneLine(revealInvisible(decision.reason)).trim() : '';
      // Closed by countersign on an error: nobody denied it, so no person is named.
      if (decision.userId === COUNTERSIGN_ACTOR) return `:warning: Not run: ${fitUntrusted(reason || 'countersign closed this call', REASON_MAX_LENGTH)} · ${when}`;
      return `:x: Denied by ${by} · ${when}${reason === '' ? '' : ` · Reason: ${fitUntrusted(reason, REASON_MAX_LENGTH)}`}`;
    }
    case 'superseded':
      return `:fast_forward: Not run: superseded by a newer message from ${by} · ${when}`;
    case 'expired':
      return `:alarm_clock: Expired without a decision · ${when}. Not run.`;
    case 'answered':
      return `:speech_balloon: Answered by ${by} · ${when}: ${fitUntrusted(oneLine(answerText(decision.answer)), ANSWER_MAX_LENGTH)}`;
    default:
      return `:grey_question: Decided by ${by} · ${when}`;
  }
}

/**
 * A form answer with one property named `answer` is shown as that property's value. Text is shown
 * as written, anything else (an object the model's form asked for) as arguments are; either way with
 * invisible and reordering characters revealed, since the model acts on the answer.
 */
function answerText(answer: unknown): string {
  const value = typeof answer === 'object' && answer !== null && Object.keys(answer).length === 1 && 'answer' in answer ? (answer as { answer: unknown }).answer : answer;
  return typeof value === 'string' ? revealInvisible(value) : stringifyArguments(value);
}

/**
 * Where the step is on its escalation ladder: ` · Stage 2 of 3 · next: escalates to @leads at
 * 14:30`. Stage 1 is the request itself; each hop is the next stage. Config text, so mentions are meant.
 */
function escalationText(step: PendingStep): string {
  const { escalation } = step;
  // Once every call under the ladder's rule is decided, its hops reach nobody: the calls still waiting keep their own approvers.
  if (!escalation || escalation.ladder.length === 0 || callsOnStepLadder(step).length === 0) return '';
  const stage = ` · Stage ${escalation.done + 1} of ${escalation.ladder.length + 1}`;
  const next = escalation.ladder[escalation.done];
  // A step stored before hops past the expiry were dropped may still keep one: it is never made either.
  const nextAt = nextHopAt({ at: escalation.nextAt, expiresAt: step.expiresAt });
  if (!next || nextAt === undefined) return stage;
  const what = next.addApprovers.length > 0 ? `escalates to ${approverMentions(next.addApprovers)}` : 'reminder';
  return `${stage} · next: ${what} ${slackDate({ epochMilliseconds: nextAt })}`;
}

function statusText(step: PendingStep, waiting: number): string {
  if (waiting > 0) return `${waiting} ${waiting === 1 ? 'call' : 'calls'} waiting`;
  return step.calls.every((call) => decisionFor(step, call) !== undefined) ? 'All decided' : 'Closed';
}

function hiddenCallsText(step: PendingStep, hiddenCalls: PendingCall[]): string {
  const counts = new Map<string, number>();
  for (const call of hiddenCalls) {
    const decision = decisionFor(step, call);
    // Closed by countersign (past the card's limit): nobody denied it.
    const outcome = decision?.outcome === 'denied' && decision.userId === COUNTERSIGN_ACTOR ? 'not run' : (decision?.outcome ?? (step.phase === 'pending' ? 'waiting' : 'closed'));
    counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
  }
  const breakdown = [...counts].map(([outcome, count]) => `${count} ${outcome}`).join(', ');
  return `:heavy_plus_sign: ${hiddenCalls.length} more ${hiddenCalls.length === 1 ? 'call' : 'calls'} not shown on this card (${breakdown})`;
}

function fallbackText(step: PendingStep, calls: PendingCall[], waiting: number): string {
  const names = [...new Set(calls.map(toolNameOf))].join(', ');
  const heading = waiting > 0 ? 'Approval needed' : 'Approval decided';
  return `${heading}: ${fitUntrusted(names, FALLBACK_NAMES_MAX_LENGTH)} requested by ${actorMention(step.requesterId)}`;
}

function contextBlock(text: string): KnownBlock {
  return { type: 'context', elements: [{ type: 'mrkdwn', text, verbatim: true }] };
}

function fitUntrusted(text: string, maxLength: number): string {
  return fitRenderedText({ text, maxLength, render: untrustedTextToMrkdwn }).text;
}

function toolNameOf(call: PendingCall): string {
  return oneLine(call.toolName).trim() || 'unnamed tool';
}

/** Tool names and reasons are shown inline: newlines would break the layout (or the bold). */
function oneLine(text: unknown): string {
  return typeof text === 'string' ? text.replace(/\s+/g, ' ') : '';
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
