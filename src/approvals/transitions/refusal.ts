import type { AuthorizationRefusalCode } from '../policy/authorize-approver.js';

export type RefusalCode =
  | AuthorizationRefusalCode
  | 'not-found'
  | 'wrong-workspace'
  | 'external-user'
  | 'membership-unverified'
  | 'wrong-channel'
  | 'closed'
  | 'already-decided'
  | 'expired'
  | 'hook-deciding'
  | 'edit-past-expiry'
  /** An edit to an input that may fall under rules too few people are approvers under at once. */
  | 'edit-unapprovable'
  | 'stale'
  | 'not-requester'
  | 'grant-not-allowed'
  | 'wrong-kind'
  /** An answer to a question that offers options that is none of them. */
  | 'not-an-option';

/** Why an action changed nothing. `message` is shown privately to whoever tried it. */
export interface Refusal {
  code: RefusalCode;
  message: string;
}

export function refusal(code: RefusalCode, message: string): { ok: false; refusal: Refusal } {
  return { ok: false, refusal: { code, message } };
}
