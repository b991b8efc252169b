import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { authorizeApprover } from './authorize-approver.js';
import { evaluatePolicy } from './evaluate-policy.js';
import { withAddedApprovers } from './escalated-approvers.js';

/**
 * README: "An input that could fall under several rules (a list with prod and dev, …) gets the
 * strictest of them (needs approval over not; fewer approvers, a larger quorum, …), never a laxer
 * `input:` rule because it is more specific."
 *
 * strictestEvaluation compares approvers, quorum, self-approval, autoApprove and grants, but not the
 * escalation ladder, whose `addApprovers` widen who may approve once a hop comes. Two rules with the
 * same approvers compare as equally strict, so the more specific one decides: a list with prod and
 * dev falls under the dev/staging rule, and 15 minutes later its ladder lets any developer approve the
 * prod deletion, which the rule for every other input never lets them do.
 */
const { policy } = parseConfigFile(
  `
policy:
  rules:
    - name: deleting pods needs SRE
      tools: ["k8s.delete_pods"]
      approvers: ["group:S0SRE"]
    - name: dev and staging deletions, developers after 15m
      tools: ["k8s.delete_pods"]
      input:
        - { field: namespaces, oneOf: [dev, staging] }
      approvers: ["group:S0SRE"]
      escalation:
        - { after: 15m, addApprovers: ["group:S0DEVS"] }
`,
  'unclear-escalation.yml',
);

const groupMembers = new Map([
  ['S0SRE', new Set(['U0SRE'])],
  ['S0DEVS', new Set(['U0DEV'])],
]);

describe('an input that may fall under a rule with an escalation ladder', () => {
  const evaluate = (namespaces: string[]) => evaluatePolicy({ policy, toolName: 'k8s.delete_pods', channel: 'C0OPS', input: { namespaces, selector: 'app=api' } });
  /** Whether U0DEV may approve the call once every hop of its ladder came. */
  const developerMayApproveAfterHops = (namespaces: string[]) => {
    const evaluation = evaluate(namespaces);
    const escalated = (evaluation.escalation ?? []).reduce((policyNow, stage) => withAddedApprovers(policyNow, stage.addApprovers), evaluation);
    return authorizeApprover({ evaluation: escalated, userId: 'U0DEV', requesterId: 'U0REQUESTER', groupMembers, approvedBy: [] }).allowed;
  };

  it('controls: dev alone may go to developers after the hop; prod alone never', () => {
    expect(developerMayApproveAfterHops(['dev'])).toBe(true);
    expect(developerMayApproveAfterHops(['prod'])).toBe(false);
  });

  it('a list with dev and prod is not handed to developers by the dev rule’s ladder', () => {
    const evaluation = evaluate(['dev', 'prod']);
    expect.soft(evaluation.rule?.name, 'the prod deletion got the dev/staging rule, ladder included').toBe('deleting pods needs SRE');
    expect(developerMayApproveAfterHops(['dev', 'prod']), 'a developer may approve deleting prod pods after 15 minutes').toBe(false);
  });
});
