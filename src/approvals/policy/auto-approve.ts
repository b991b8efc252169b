import type { PolicyConfig } from '../../config/policy-config-schema.js';
import type { PolicyEvaluation } from './evaluate-policy.js';

/**
 * Whether a call that needs approval runs without a card because the channel (or the whole
 * workspace) is in auto-approve mode for trusted automation. A rule can forbid it for its tools,
 * and it is off unless `policy.autoApprove` turns it on. The caller should still record the call as
 * auto-approved so the audit trail does not show it as unreviewed.
 */
export function isAutoApproveActive({ policy, channel, evaluation }: { policy: PolicyConfig; channel: string; evaluation: PolicyEvaluation }): boolean {
  if (evaluation.autoApprove === 'forbidden') return false;
  return policy.autoApprove.global || policy.autoApprove.channels.includes(channel);
}
