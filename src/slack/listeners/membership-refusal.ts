import { EXTERNAL_USER_TEXT, MEMBERSHIP_UNVERIFIED_TEXT, type Membership } from '../../approvals/transitions/call-action.js';

/**
 * Why someone is refused for not (provably) belonging to the workspace's organisation, in the
 * words a card click gets; undefined for a member. For what no call decider judges: Revoke and
 * the `/countersign` listings.
 */
export function membershipRefusal(membership: Membership): { code: 'external-user' | 'membership-unverified'; reason: string } | undefined {
  if (membership === 'member') return undefined;
  return membership === 'external' ? { code: 'external-user', reason: EXTERNAL_USER_TEXT } : { code: 'membership-unverified', reason: MEMBERSHIP_UNVERIFIED_TEXT };
}
