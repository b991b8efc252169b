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
} as const;

/** Option buttons of an `ask_user` question: `countersign_answer_<index>`. */
export const ANSWER_ACTION_PREFIX = 'countersign_answer_';
export const ANSWER_ACTION_PATTERN = /^countersign_answer_(\d{1,2})$/;

export interface ApprovalActionReference {
  stepId: string;
  approvalId: string;
}

/** AI SDK ids (`generateId`) and our step ids are short; anything longer is not ours. */
const MAX_PART_LENGTH = 200;
const PART_PATTERN = /^[A-Za-z0-9_-]+$/;
/** Outside the part alphabet, so splitting on it is unambiguous. */
const SEPARATOR = ':';

/**
 * Button `value` naming the step and the call a click decides. Throws on ids that
 * `decodeApprovalActionValue` would reject: a card whose clicks cannot be decoded must not be posted.
 */
export function encodeApprovalActionValue({ stepId, approvalId }: ApprovalActionReference): string {
  for (const [name, part] of [['stepId', stepId], ['approvalId', approvalId]] as const) {
    if (!isValidPart(part)) {
      throw new RangeError(`${name} must be 1–${MAX_PART_LENGTH} characters of [A-Za-z0-9_-], got ${JSON.stringify(part.slice(0, 50))}`);
    }
  }
  return `${stepId}${SEPARATOR}${approvalId}`;
}

/**
 * Reads a button `value` back. It arrives in a Slack payload anyone in the channel can forge,
 * so anything that is not exactly what `encodeApprovalActionValue` produces is `undefined`.
 */
export function decodeApprovalActionValue(value: unknown): ApprovalActionReference | undefined {
  // Length first so a hostile payload never reaches the pattern with megabytes of text.
  if (typeof value !== 'string' || value.length > Math.min(SLACK_LIMITS.buttonValueLength, MAX_PART_LENGTH * 2 + 1)) {
    return undefined;
  }
  const parts = value.split(SEPARATOR);
  if (parts.length !== 2) return undefined;
  const [stepId, approvalId] = parts;
  if (stepId === undefined || approvalId === undefined || !isValidPart(stepId) || !isValidPart(approvalId)) return undefined;
  return { stepId, approvalId };
}

function isValidPart(part: string): boolean {
  return part.length <= MAX_PART_LENGTH && PART_PATTERN.test(part);
}
