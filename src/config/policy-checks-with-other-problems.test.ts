import { describe, expect, it } from 'vitest';
import { problemsOf } from './config-problems.test-support.js';

/**
 * ConfigError "carries every problem found, not just the first, so an operator can fix them all in
 * one edit-and-restart cycle", and the policy's cross-rule checks are written to run "even when some
 * rule has an error of its own ... the operator should see every problem in one run". The checks on
 * the effective settings (`checkSettings`: reminder vs expiry, quorum vs named approvers, notify,
 * escalation) run in the policy's transform, which zod skips as soon as any other policy field is
 * wrong, so those problems are missing from the report.
 */
describe('policy problems reported together', () => {
  it('reports an impossible quorum in defaults alongside a #name in a rule', () => {
    const problems = problemsOf(`
policy:
  defaults:
    approvers: [U0ALICE]
    required: 2
  rules:
    - tools: [deploy]
      channels: ["#ops"]
`);
    expect(problems.map((problem) => problem.field).sort()).toEqual(['countersign.yml policy.defaults.required', 'countersign.yml policy.rules[0].channels[0]']);
  });

  it('reports a reminder longer than the expiry alongside a typo elsewhere in the policy', () => {
    const problems = problemsOf(`
policy:
  defaults:
    expiry: 1h
    reminder: 2h
    onExpiry: stpo
`);
    expect(problems.map((problem) => problem.field).sort()).toEqual(['countersign.yml policy.defaults.onExpiry', 'countersign.yml policy.defaults.reminder']);
  });

  it('reports a rule\'s reminder problem alongside a cross-rule problem in another field of that rule', () => {
    const problems = problemsOf(`
policy:
  rules:
    - name: deploys
      tools: [deploy]
    - name: deploys
      tools: [restart]
      expiry: 1h
      reminder: 2h
`);
    expect(problems.map((problem) => problem.field).sort()).toEqual(['countersign.yml policy.rules[1].name', 'countersign.yml policy.rules[1].reminder']);
  });

  it('does not check settings against a malformed field they depend on (no guesses reported)', () => {
    const problems = problemsOf(`
policy:
  rules:
    - tools: [deploy]
      approvers: ["@bob"]
      notify:
        dmApprovers: true
`);
    expect(problems.map((problem) => problem.field)).toEqual(['countersign.yml policy.rules[0].approvers[0]']);
  });
});
