import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyCallAction, type CallAction } from '../../src/approvals/transitions/call-action.js';
import { escalateTransition } from '../../src/approvals/transitions/escalate.js';
import { evaluatePolicy } from '../../src/approvals/policy/evaluate-policy.js';
import { currentVersion, inputHash } from '../../src/approvals/input-version.js';
import type { PendingStep } from '../../src/approvals/pending-step.js';
import { parseConfigFile } from '../../src/config/config-file.js';
import { buildPendingStep } from '../../src/conversation/build-pending-step.js';
import { newThreadState } from '../../src/store/thread-state.js';

/**
 * A pure model-based search for countersignature violations where quorum, Edit, the escalation
 * ladder, deploys, instigators and unclear inputs meet (shared notes "integrity-and-fencing").
 * Drives `applyCallAction` and `escalateTransition` (the transitions every store commits) through
 * random clicks, edits, hops, deploys and time; the oracle below is
 * written from the README alone: an approved version ran only with `required` distinct approvals
 * of exactly that version (each recorded by an accepted click on it), each by someone every rule
 * the input may fall under names (or a hop of that rule's ladder due by then added), never the
 * requester, and before every such rule's expiry counted from the request.
 * A write past `transition.deadline` is dropped, as the store refuses it by its clock.
 */
/** About a second at the default (40 commands a run); a soak: `PROPERTY_RUNS=100000 npx vitest run test/model/quorum-ladder.model.test.ts`. */
const RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);
const MINUTE = 60_000;
const config = parseConfigFile(
  `
policy:
  rules:
    - name: staging
      tools: [restart_service]
      input:
        - { field: namespace, equals: staging }
      approvers: [U0A, U0B, "group:S0DEV"]
      expiry: 1h
      escalation:
        - { after: 10m, addApprovers: [U0F] }
    - name: prod
      tools: [restart_service]
      input:
        - { field: namespace, equals: prod }
      approvers: [U0B, U0C, "group:S0SRE"]
      required: 2
      expiry: 30m
      escalation:
        - { after: 5m, remind: true }
        - { after: 10m, addApprovers: [U0D] }
        - { after: 20m, addApprovers: ["group:S0LEADS"] }
`,
  'quorum-ladder.yml',
);
/** A deploy made while cards wait: prod's approvers, quorum, expiry and ladder change; staging needs two. */
const deployed = parseConfigFile(
  `
policy:
  rules:
    - name: staging
      tools: [restart_service]
      input:
        - { field: namespace, equals: staging }
      approvers: [U0A, "group:S0DEV", U0D]
      required: 2
      expiry: 45m
    - name: prod
      tools: [restart_service]
      input:
        - { field: namespace, equals: prod }
      approvers: [U0C, U0D, "group:S0SRE"]
      required: 2
      expiry: 20m
      escalation:
        - { after: 10m, addApprovers: [U0X] }
`,
  'quorum-ladder-deployed.yml',
);
const GROUPS = new Map<string, ReadonlySet<string>>([
  ['S0DEV', new Set(['U0A', 'U0X'])],
  ['S0SRE', new Set(['U0C', 'U0REQ'])],
  ['S0LEADS', new Set(['U0F', 'U0A'])],
]);
const USERS = ['U0REQ', 'U0A', 'U0B', 'U0C', 'U0D', 'U0F', 'U0X'] as const;
const INPUTS = [
  { service: 'api', namespace: 'staging' },
  { service: 'api', namespace: 'prod' },
  { service: 'api', namespace: ['prod', 'staging'] },
  { service: 'web', namespace: 'prod' },
] as const;

/** The oracle's rules, from the config text above. */
const RULES = {
  staging: { approvers: ['U0A', 'U0B', 'U0X'], required: 1, expiryMs: 60 * MINUTE, hops: [{ afterMs: 10 * MINUTE, add: ['U0F'] }] },
  prod: {
    approvers: ['U0B', 'U0C', 'U0REQ'],
    required: 2,
    expiryMs: 30 * MINUTE,
    hops: [
      { afterMs: 10 * MINUTE, add: ['U0D'] },
      { afterMs: 20 * MINUTE, add: ['U0F', 'U0A'] },
    ],
  },
};
const DEPLOYED_RULES = {
  staging: { approvers: ['U0A', 'U0X', 'U0D'], required: 2, expiryMs: 45 * MINUTE, hops: [] as Array<{ afterMs: number; add: string[] }> },
  prod: {
    approvers: ['U0C', 'U0D', 'U0REQ'],
    required: 2,
    expiryMs: 20 * MINUTE,
    hops: [{ afterMs: 10 * MINUTE, add: ['U0X'] }, ...RULES.prod.hops],
  },
};
function rulesOf(input: { namespace: string | readonly string[] }, rules: typeof RULES = RULES) {
  const namespaces = typeof input.namespace === 'string' ? [input.namespace] : input.namespace;
  return namespaces.map((namespace) => rules[namespace as 'staging' | 'prod']);
}

type Command =
  | { kind: 'approve'; call: number; user: string; stale: boolean }
  | { kind: 'deny'; call: number; user: string }
  | { kind: 'edit'; call: number; user: string; input: number; stale: boolean }
  | { kind: 'tick'; minutes: number }
  | { kind: 'hop' }
  | { kind: 'deploy' };

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('approve' as const), call: fc.nat(1), user: fc.constantFrom(...USERS), stale: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deny' as const), call: fc.nat(1), user: fc.constantFrom(...USERS) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('edit' as const), call: fc.nat(1), user: fc.constantFrom(...USERS), input: fc.nat(INPUTS.length - 1), stale: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('tick' as const), minutes: fc.constantFrom(1, 3, 5, 9) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('hop' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deploy' as const) }) },
);

async function firstStep(inputs: readonly number[], steeredByB: boolean): Promise<PendingStep> {
  const thread = newThreadState({ teamId: 'T0TEAM', channel: 'C0OPS', threadTs: '1700000000.000100' }, 0);
  // U0B's deny reason earlier in the turn led to these calls.
  if (steeredByB) thread.instigatorIds = ['U0B'];
  return buildPendingStep({
    thread,
    requesterId: 'U0REQ',
    requests: inputs.map((input, index) => ({ kind: 'approval', approvalId: `apv${index}`, toolCallId: `call${index}`, toolName: 'restart_service', input: INPUTS[input] })),
    policy: config.policy,
    definitionOf: () => undefined,
    stepId: 'step1',
    now: 0,
  });
}

/** What is wrong with an approved call, by the oracle; undefined when nothing is. */
function violation(step: PendingStep, approvalId: string, accepted: Set<string>, deployedAt: number | undefined): string | undefined {
  const call = step.calls.find((candidate) => candidate.approvalId === approvalId)!;
  const decision = step.decisions[approvalId]!;
  const version = call.versions!.find((candidate) => candidate.number === decision.version);
  if (!version || version.inputHash !== inputHash(version.input) || decision.inputHash !== version.inputHash) return 'approved version does not hold together';
  // Before a deploy, the config the card was posted with; once one happened, the one in force too.
  const rules = [
    ...(deployedAt === undefined || version.at < deployedAt ? rulesOf(version.input as { namespace: string }) : []),
    ...(deployedAt === undefined ? [] : rulesOf(version.input as { namespace: string }, DEPLOYED_RULES as unknown as typeof RULES)),
  ];
  const approvers = [...new Set(decision.approvedBy ?? [])];
  const required = Math.max(...rules.map((rule) => rule.required));
  if (approvers.length < required) return `${approvers.length} of ${required} approvals`;
  for (const user of approvers) {
    if (!accepted.has(`${approvalId}:${decision.version}:${user}`)) return `${user} counted without an accepted approval of version ${decision.version}`;
    if (user === 'U0REQ') return 'the requester counted';
    if (user === 'U0B' && step.instigatorIds?.includes('U0B')) return 'the author of the deny reason that led to it counted';
    for (const rule of rules) {
      const added = rule.hops.filter((hop) => hop.afterMs <= decision.at).flatMap((hop) => hop.add);
      if (!rule.approvers.includes(user) && !added.includes(user)) return `${user} is no approver of a rule of ${JSON.stringify(version.input)} at ${decision.at / MINUTE}m`;
    }
  }
  for (const rule of rules) if (decision.at >= rule.expiryMs) return `approved at ${decision.at / MINUTE}m, after the rule's expiry`;
  return undefined;
}

describe('quorum, edits, escalation and unclear inputs', () => {
  it('never approves a version without its countersignature', async () => {
    // What the runs reached, so a change that made approvals unreachable does not pass by checking nothing.
    const reached = { approved: 0, byTwo: 0, edited: 0, afterDeploy: 0, escalated: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(INPUTS.length - 1), { minLength: 1, maxLength: 2 }), fc.boolean(), fc.array(command, { maxLength: 40, size: 'max' }), async (inputs, steered, commands) => {
        let step = await firstStep(inputs, steered);
        let now = 0;
        let deployedAt: number | undefined;
        const inForce = () => (deployedAt === undefined ? config : deployed).policy;
        const accepted = new Set<string>();
        for (const next of commands) {
          if (next.kind === 'tick') {
            now += next.minutes * MINUTE;
            continue;
          }
          if (next.kind === 'deploy') {
            deployedAt ??= now;
            continue;
          }
          if (next.kind === 'hop') {
            const hop = escalateTransition(step, { now });
            if (hop) step = { ...hop.transition.step, revision: step.revision + 1 };
            continue;
          }
          const call = step.calls[next.call % step.calls.length]!;
          const current = currentVersion(call)!.number;
          const seen = next.kind !== 'deny' && next.stale && current > 0 ? current - 1 : current;
          const action: CallAction =
            next.kind === 'approve'
              ? { kind: 'approve', version: seen }
              : next.kind === 'deny'
                ? { kind: 'deny' }
                : { kind: 'edit', fromVersion: seen, input: INPUTS[next.input], submittedInput: INPUTS[next.input], policy: evaluatePolicy({ policy: inForce(), toolName: 'restart_service', channel: 'C0OPS', input: INPUTS[next.input] }) };
          const result = applyCallAction(
            step,
            { stepId: step.stepId, approvalId: call.approvalId, userId: next.user, origin: { teamId: 'T0TEAM', channel: 'C0OPS', membership: 'member' }, action },
            { now, groupMembers: GROUPS, newGrantId: () => 'g1', currentPolicy: evaluatePolicy({ policy: inForce(), toolName: 'restart_service', channel: 'C0OPS', input: currentVersion(call)!.input }) },
          );
          if (!result.ok) continue;
          if (result.transition.deadline !== undefined && now >= result.transition.deadline) continue;
          const { effect } = result;
          if (next.kind === 'approve' && (effect.kind === 'counted' || (effect.kind === 'decided' && effect.decision.outcome === 'approved'))) accepted.add(`${call.approvalId}:${seen}:${next.user}`);
          if (effect.kind === 'new-version' && effect.counted) accepted.add(`${call.approvalId}:${effect.version.number}:${next.user}`);
          // An edit to the same input is an approval of the version on the card.
          if (next.kind === 'edit' && effect.kind === 'counted') accepted.add(`${call.approvalId}:${current}:${next.user}`);
          if (next.kind === 'edit' && effect.kind === 'decided' && effect.decision.outcome === 'approved') accepted.add(`${call.approvalId}:${effect.decision.version}:${next.user}`);
          const before = step;
          step = { ...result.transition.step, revision: step.revision + 1 };
          for (const candidate of step.calls) {
            // Judged when it is decided: by the config in force then.
            if (step.decisions[candidate.approvalId]?.outcome !== 'approved' || before.decisions[candidate.approvalId] !== undefined) continue;
            const wrong = violation(step, candidate.approvalId, accepted, deployedAt);
            if (wrong) throw new Error(`${candidate.approvalId}: ${wrong}`);
            const decision = step.decisions[candidate.approvalId]!;
            reached.approved += 1;
            if ((decision.approvedBy?.length ?? 0) >= 2) reached.byTwo += 1;
            if ((decision.version ?? 0) > 0) reached.edited += 1;
            if (deployedAt !== undefined) reached.afterDeploy += 1;
            if ((step.escalation?.done ?? 0) > 0) reached.escalated += 1;
          }
        }
      }),
      { numRuns: RUNS },
    );
    if (process.env.MODEL_STATS) console.log(JSON.stringify(reached));
    if (RUNS >= 1000) expect(Object.values(reached).every((count) => count > 0), JSON.stringify(reached)).toBe(true);
  });
});
