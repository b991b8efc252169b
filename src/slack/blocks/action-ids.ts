import { SLACK_LIMITS } from './limits.js';

/** `action_id`s of the approval card buttons; listeners route on these. */
export const APPROVAL_ACTION_IDS = {
  approve: 'countersign_approve',
  deny: 'countersign_deny',
  edit: 'countersign_edit',
  denyWithReason: 'countersign_deny_reason',
  viewInput: 'countersign_view_input',
  /** Opens "Approve and allow for this thread / channel for N hours". */
  grant: 'countersign_grant',
  /** Revokes a grant listed by `/countersign grants`; its value is the grant id. */
  revokeGrant: 'countersign_revoke_grant',
  /** "Try again" after a failed turn: runs the turn again from the stored history. */
  retry: 'countersign_retry',
  /** Opens the answer form of an `ask_user` question. */
  reply: 'countersign_reply',
  /** Declines an `ask_user` question: the model is told the person would not answer. */
  declineQuestion: 'countersign_decline_question',
} as const;

/**
 * Buttons of the App Home tab. Approve and Deny carry the same value as the card's
 * (`encodeApprovalActionValue`) and go through the same decider; their own ids tell the listener
 * that the click has no channel and that the answer is a fresh Home view, not an ephemeral.
 */
export const HOME_ACTION_IDS = {
  approve: 'countersign_home_approve',
  deny: 'countersign_home_deny',
  revokeGrant: 'countersign_home_revoke_grant',
  /** Opens the whole input when Home had to cut it; judged by channel membership, as Approve is. */
  viewInput: 'countersign_home_view_input',
  /** A link to the card (Edit, Deny with reason and grants are there); acknowledged, nothing else. */
  openCard: 'countersign_home_open_card',
} as const;

/** Option buttons of an `ask_user` question: `countersign_answer_<index>`. */
export const ANSWER_ACTION_PREFIX = 'countersign_answer_';
export const ANSWER_ACTION_PATTERN = /^countersign_answer_(\d{1,2})$/;

export interface ApprovalActionReference {
  stepId: string;
  approvalId: string;
  /**
   * The input version the card showed (0 is the model's). An approval of any other version is
   * refused as stale. Absent on buttons that do not approve (Deny, answers) and on older cards.
   */
  version?: number;
}

/** Versions are small counters; anything longer is not ours. */
const VERSION_PATTERN = /^v(\d{1,4})$/;

/** AI SDK ids (`generateId`) and our step ids are short; anything longer is not ours. */
const MAX_PART_LENGTH = 200;
const PART_PATTERN = /^[A-Za-z0-9_-]+$/;
/** Outside the part alphabet, so splitting on it is unambiguous. */
const SEPARATOR = ':';

/**
 * Button `value` naming the step and the call a click decides. Throws on ids that
 * `decodeApprovalActionValue` would reject: a card whose clicks cannot be decoded must not be posted.
 */
export function encodeApprovalActionValue({ stepId, approvalId, version }: ApprovalActionReference): string {
  for (const [name, part] of [['stepId', stepId], ['approvalId', approvalId]] as const) {
    if (!isValidPart(part)) {
      throw new RangeError(`${name} must be 1–${MAX_PART_LENGTH} characters of [A-Za-z0-9_-], got ${JSON.stringify(part.slice(0, 50))}`);
    }
  }
  if (version !== undefined && !(Number.isSafeInteger(version) && version >= 0 && version < 10_000)) throw new RangeError(`version must be 0–9999, got ${version}`);
  return version === undefined ? `${stepId}${SEPARATOR}${approvalId}` : `${stepId}${SEPARATOR}${approvalId}${SEPARATOR}v${version}`;
}

/**
 * Reads a button `value` back. It arrives in a Slack payload anyone in the channel can forge,
 * so anything that is not exactly what `encodeApprovalActionValue` produces is `undefined`.
 */
export function decodeApprovalActionValue(value: unknown): ApprovalActionReference | undefined {
  // Length first so a hostile payload never reaches the pattern with megabytes of text.
  if (typeof value !== 'string' || value.length > Math.min(SLACK_LIMITS.buttonValueLength, MAX_PART_LENGTH * 2 + 7)) return undefined;
  const parts = value.split(SEPARATOR);
  if (parts.length !== 2 && parts.length !== 3) return undefined;
  const [stepId, approvalId, versionPart] = parts;
  if (stepId === undefined || approvalId === undefined || !isValidPart(stepId) || !isValidPart(approvalId)) return undefined;
  if (versionPart === undefined) return { stepId, approvalId };
  const version = VERSION_PATTERN.exec(versionPart)?.[1];
  return version === undefined ? undefined : { stepId, approvalId, version: Number(version) };
}

/** A modal about one call remembers the call, the version it showed and the channel it was opened from. */
export interface CallFormReference extends ApprovalActionReference {
  channel: string;
}

const CHANNEL_PATTERN = /^[CDG][A-Z0-9]{2,30}$/;

/**
 * `private_metadata` of a modal about a call. Slack returns it unchanged with the submission; it
 * carries the channel the modal was opened from because a submission itself names no channel.
 */
export function encodeCallFormMetadata(reference: CallFormReference): string {
  if (!CHANNEL_PATTERN.test(reference.channel)) throw new RangeError(`channel must be a Slack channel id, got ${JSON.stringify(reference.channel.slice(0, 50))}`);
  return `${encodeApprovalActionValue(reference)}${SEPARATOR}${reference.channel}`;
}

export function decodeCallFormMetadata(value: unknown): CallFormReference | undefined {
  if (typeof value !== 'string' || value.length > MAX_PART_LENGTH * 2 + 40) return undefined;
  const cut = value.lastIndexOf(SEPARATOR);
  const channel = value.slice(cut + 1);
  const reference = cut > 0 && CHANNEL_PATTERN.test(channel) ? decodeApprovalActionValue(value.slice(0, cut)) : undefined;
  return reference && { ...reference, channel };
}

function isValidPart(part: string): boolean {
  return part.length <= MAX_PART_LENGTH && PART_PATTERN.test(part);
}
