import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../config/config-file.js';
import { buildPendingStep } from '../../conversation/build-pending-step.js';
import { newThreadState } from '../../store/thread-state.js';
import { currentVersion } from '../input-version.js';
import type { PendingStep } from '../pending-step.js';
import { CHANNEL, CREATED_AT, evaluation, makeStep, TEAM } from '../pending-step.test-support.js';
import { evaluatePolicy } from '../policy/evaluate-policy.js';
import { applyCallAction, type CallAction, type CallActionResult } from './call-action.js';
import { escalateTransition } from './escalate.js';

/**
 * A step's escalation ladder comes from one rule (staging: "after 30 min, leads may approve too");
 * the prod rule names only the SRE lead and has no ladder. Fallback approvers are the staging
 * rule's answer for staging input, not a licence to approve prod input.
 */
const LEADS = 'S0LEADS';
const LARRY = 'U0LARRY'; // a lead: a fallback approver of the staging rule only
const SRE_LEAD = 'U0SRELEAD';
const STAGE_OWNER = 'U0STAGEOWNER';
const HOP_MS = 30 * 60_000;
const groupMembers = new Map([[LEADS, new Set([LARRY])]]);
const here = { teamId: TEAM, channel: CHANNEL, membership: 'member' as const };
const ladder = [{ afterMs: HOP_MS, remind: false, addApprovers: [{ kind: 'group' as const, groupId: LEADS }] }];

const staging = evaluation({ rule: { index: 1, name: 'staging restarts' }, approvers: [{ kind: 'user', userId: STAGE_OWNER }], escalation: ladder });
const prod = evaluation({ rule: { index: 0, name: 'prod restarts' }, approvers: [{ kind: 'user', userId: SRE_LEAD }] });
const stagingInput = { service: 'api', namespace: 'staging' };
const prodInput = { service: 'api', namespace: 'prod' };

const policy = parseConfigFile(
  `
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      input: [{ field: namespace, equals: prod }]
      approvers: [${SRE_LEAD}]
    - name: staging restarts
      tools: [restart_service]
      approvers: [${STAGE_OWNER}]
      escalation: [{ after: 30m, addApprovers: ["group:${LEADS}"] }]
`,
  'countersign.yml',
).policy;

function act(step: PendingStep, approvalId: string, userId: string, action: CallAction): CallActionResult {
  return applyCallAction(step, { stepId: step.stepId, approvalId, userId, origin: here, action }, { now: step.createdAt + HOP_MS + 60_000, groupMembers, newGrantId: () => 'g1' });
}

const editTo = (input: unknown, fromVersion = 0): CallAction => ({
  kind: 'edit',
  fromVersion,
  input,
  submittedInput: input,
  policy: evaluatePolicy({ policy, toolName: 'restart_service', channel: CHANNEL, input }),
});

function effectOf(result: CallActionResult) {
  if (!result.ok) throw new Error(`refused: ${result.refusal.message}`);
  return result.effect;
}

function escalated(step: PendingStep): PendingStep {
  const hop = escalateTransition(step, { now: step.createdAt + HOP_MS });
  if (!hop) throw new Error('no hop');
  return hop.transition.step;
}

/** A step as the bot builds it from the config: the first call's ladder, and the rule it came from. */
async function builtStep(inputs: Record<string, unknown>): Promise<PendingStep> {
  return buildPendingStep({
    thread: newThreadState({ teamId: TEAM, channel: CHANNEL, threadTs: '1700000000.000100' }, CREATED_AT),
    requesterId: 'U0ALICE',
    requests: Object.entries(inputs).map(([approvalId, input], index) => ({ kind: 'approval' as const, approvalId, toolCallId: `call_${index}`, toolName: 'restart_service', input })),
    policy,
    definitionOf: () => undefined,
    stepId: 'step1',
    now: CREATED_AT,
  });
}

/** Unnamed rules, known by their place: a deploy that swaps them puts prod where staging was. */
const unnamedPolicy = (rules: string[]) => parseConfigFile(`policy:\n  rules:\n${rules.join('')}`, 'countersign.yml').policy;
const UNNAMED_STAGING = `    - tools: [restart_service]\n      input: [{ field: namespace, equals: staging }]\n      approvers: [${STAGE_OWNER}]\n      escalation: [{ after: 30m, addApprovers: ["group:${LEADS}"] }]\n`;
const UNNAMED_PROD = `    - tools: [restart_service]\n      input: [{ field: namespace, equals: prod }]\n      approvers: [${SRE_LEAD}]\n`;

/** A step with the staging call's ladder stored as the previous version wrote it: without its rule. */
function storedWithoutRule(calls: Parameters<typeof makeStep>[0]): PendingStep {
  const step = makeStep(calls);
  step.escalation = { ladder, done: 0, nextAt: step.createdAt + HOP_MS };
  step.expiresAt = step.createdAt + 24 * 3_600_000;
  return step;
}

describe('escalation ladder: fallback approvers stay under the rule whose ladder named them', () => {
  it('a lead may not approve a prod version by editing a staging call after the staging hop', async () => {
    const step = escalated(await builtStep({ a1: stagingInput }));
    expect(step.escalation?.rule).toMatchObject({ index: 1, name: 'staging restarts' });

    // Larry edits the staging call to prod; the policy for the prod input names only the SRE lead.
    const result = act(step, 'a1', LARRY, editTo(prodInput));
    expect(effectOf(result)).toMatchObject({ kind: 'new-version', counted: false });
    const edited = (result as Extract<CallActionResult, { ok: true }>).transition.step;
    expect(currentVersion(edited.calls[0]!)?.policy.approvers).toEqual([{ kind: 'user', userId: SRE_LEAD }]);
    expect(act(edited, 'a1', LARRY, { kind: 'approve', version: 1 })).toMatchObject({ ok: false, refusal: { code: 'not-eligible' } });
    expect(effectOf(act(edited, 'a1', SRE_LEAD, { kind: 'approve', version: 1 }))).toMatchObject({ kind: 'decided' });
  });

  it("a hop of the first call's (staging) ladder does not let a lead approve another call of the step that is under the prod rule", async () => {
    const step = escalated(await builtStep({ a1: stagingInput, a2: { service: 'db', namespace: 'prod' } }));
    // Larry may approve the staging call now (the staging rule's own ladder) ...
    expect(act(step, 'a1', LARRY, { kind: 'approve', version: 0 }).ok).toBe(true);
    // ... but the prod rule names only the SRE lead and has no ladder of its own.
    expect(act(step, 'a2', LARRY, { kind: 'approve', version: 0 })).toMatchObject({ ok: false, refusal: { code: 'not-eligible' } });
    expect(escalateTransition(step, { now: step.createdAt + HOP_MS })).toBeUndefined();
  });

  it('an edit that stays under the ladder rule keeps the hops so far, and one that moves a call there gets them', async () => {
    const step = escalated(await builtStep({ a1: stagingInput, a2: prodInput }));
    // Larry's own edit of the staging call is a staging version he may approve: it runs on his submit.
    expect(effectOf(act(step, 'a1', LARRY, editTo({ service: 'web', namespace: 'staging' })))).toMatchObject({ kind: 'decided' });
    // The SRE lead moves the prod call to staging: the staging rule, with its ladder's hop, decides it now.
    const moved = act(step, 'a2', SRE_LEAD, editTo({ service: 'api', namespace: 'staging' }));
    expect(effectOf(moved)).toMatchObject({ kind: 'new-version', counted: false });
    const movedStep = (moved as Extract<CallActionResult, { ok: true }>).transition.step;
    expect(effectOf(act(movedStep, 'a2', LARRY, { kind: 'approve', version: 1 }))).toMatchObject({ kind: 'decided' });
  });

  it('after a deploy that swapped unnamed rules, an edit to prod (now at the staging rule\'s place) does not get the staging ladder', async () => {
    const before = unnamedPolicy([UNNAMED_STAGING, UNNAMED_PROD]);
    const after = unnamedPolicy([UNNAMED_PROD, UNNAMED_STAGING]);
    const built = await buildPendingStep({
      thread: newThreadState({ teamId: TEAM, channel: CHANNEL, threadTs: '1700000000.000100' }, CREATED_AT),
      requesterId: 'U0ALICE',
      requests: [{ kind: 'approval' as const, approvalId: 'a1', toolCallId: 'call_0', toolName: 'restart_service', input: stagingInput }],
      policy: before,
      definitionOf: () => undefined,
      stepId: 'step1',
      now: CREATED_AT,
    });
    const step = escalated(built);
    expect(step.escalation?.rule).toMatchObject({ index: 0 });
    // The replica with the new config judges Larry's edit: prod is rules[0] there.
    const toProd: CallAction = { kind: 'edit', fromVersion: 0, input: prodInput, submittedInput: prodInput, policy: evaluatePolicy({ policy: after, toolName: 'restart_service', channel: CHANNEL, input: prodInput }) };
    const result = act(step, 'a1', LARRY, toProd);
    expect(effectOf(result)).toMatchObject({ kind: 'new-version', counted: false });
    const edited = (result as Extract<CallActionResult, { ok: true }>).transition.step;
    expect(act(edited, 'a1', LARRY, { kind: 'approve', version: 1 })).toMatchObject({ ok: false, refusal: { code: 'not-eligible' } });
  });

  it('reads a step stored without the ladder rule as the ladder of its first call that has one', () => {
    const stored = storedWithoutRule([
      { approvalId: 'a1', input: stagingInput, policy: staging },
      { approvalId: 'a2', input: prodInput, policy: prod },
    ]);
    const step = escalated(stored);
    expect(step.escalation?.rule).toEqual({ index: 1, name: 'staging restarts' });
    expect(act(step, 'a1', LARRY, { kind: 'approve', version: 0 }).ok).toBe(true);
    expect(act(step, 'a2', LARRY, { kind: 'approve', version: 0 })).toMatchObject({ ok: false, refusal: { code: 'not-eligible' } });
  });

  it('does not carry the hops of a step stored without the ladder rule into an edit to prod', () => {
    // Already escalated by the previous version: the staging call's policy has the leads, the ladder no rule.
    const step = storedWithoutRule([{ approvalId: 'a1', input: stagingInput, policy: staging }]);
    step.escalation = { ladder, done: 1 };
    const version = currentVersion(step.calls[0]!)!;
    version.policy = { ...version.policy, approvers: [...version.policy.approvers, { kind: 'group', groupId: LEADS }] };
    expect(effectOf(act(step, 'a1', LARRY, { kind: 'edit', fromVersion: 0, input: prodInput, submittedInput: prodInput, policy: prod }))).toMatchObject({ kind: 'new-version', counted: false });
  });

  it('adds a hop to no call when no call of a step stored without the ladder rule names a ladder', () => {
    const step = escalated(storedWithoutRule([{ approvalId: 'a1', input: prodInput, policy: prod }]));
    // The ladder is nobody's: it stops at its first hop, with nothing added.
    expect(step.escalation).toMatchObject({ done: 0 });
    expect(step.escalation?.nextAt).toBeUndefined();
    expect(step.escalation?.rule).toBeUndefined();
    expect(act(step, 'a1', LARRY, { kind: 'approve', version: 0 })).toMatchObject({ ok: false, refusal: { code: 'not-eligible' } });
  });
});
