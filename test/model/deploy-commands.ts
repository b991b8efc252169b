import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, describe, expect, inject, it } from 'vitest';

import { createMemoryStore } from '../../src/store/memory-store.js';
import { createRedisStore } from '../../src/store/redis-store.js';
import type { StateStore } from '../../src/store/state-store.js';
import { CHANNEL, INPUTS, TEAM, THREADS, USERS, type ApproverChoice, type Input } from './countersignature-world.js';
import { click, executionViolation, governing, resumeOutcome, type DClick, type DConfig, type DModel, type DRule, type DStep, type HookName, type ToolVersion } from './deploy-model.js';
import { createDeployWorld, type DeployWorld, type Execution, type HookVerdict } from './deploy-world.js';
import { observed, projection } from './step-projection.js';

/**
 * Model-based test of the countersignature across deploys while cards wait (see shared notes
 * "integrity-and-fencing"): random sequences of proposals (each asked of the approval hook, when
 * one is configured), clicks (approve, deny, edit), the clock, sweeps, resumes and newer messages,
 * interleaved with deploys that change a rule's quorum, expiry or `autoApprove`, change or remove
 * the tool's definition, or add, rename or remove the approval hook. After every command the stored
 * steps must be what the model says, and every call that ran must hold under the governing policy
 * (the stricter of its version's stored rule and the config in force), for exactly the approved
 * version, on the tool definition its approvers saw, and run once.
 */
const RUNS = Math.max(200, Number(process.env.PROPERTY_RUNS ?? 200));

const reached = new Map<string, number>();
const count = (what: string) => reached.set(what, (reached.get(what) ?? 0) + 1);
afterAll(() => {
  if (process.env.MODEL_STATS) console.log(JSON.stringify(Object.fromEntries([...reached].sort()), null, 1));
});

type RuleChange = { required: 1 | 2 | null; expiryMinutes: number | null; autoApprove: 'allowed' | 'forbidden' | null };
type Action =
  | { kind: 'propose'; requester: string; thread: number; input: Input; hook: HookVerdict }
  /** `smart`: the clicker is one of those the model says may approve the version on the card now (when anyone may). */
  | { kind: 'click'; step: number; click: DClick; smart: boolean }
  | { kind: 'tick'; minutes: number }
  | { kind: 'sweep' }
  | { kind: 'resume'; step: number }
  /** A resume whose process dies right after its claim (a deploy's kill): a later resume of the step finishes the turn. */
  | { kind: 'resume-crash'; step: number }
  | { kind: 'new-message'; step: number; user: string }
  /**
   * A deploy that sets the expiry of the rule over a step's (latest or approved) version to about
   * the step's age at its decision (or now, while it waits): `offset` minutes from it, so the new
   * deadline falls just before or just after the clicks.
   */
  | { kind: 'deploy-expiry'; step: number; offset: number }
  | { kind: 'deploy'; prod: RuleChange; other: RuleChange; tool: ToolVersion | null; hook: HookName | 'none' | null };

const approvers: fc.Arbitrary<ApproverChoice> = fc.oneof(
  fc.constant({ kind: 'channel' } as const),
  fc.constant({ kind: 'group' } as const),
  fc.subarray([...USERS], { minLength: 3, maxLength: 3 }).map((users) => ({ kind: 'users' as const, users })),
);
const rule = (name: 'prod' | 'other'): fc.Arbitrary<DRule> =>
  fc.record({
    name: fc.constant(name),
    approvers,
    required: fc.constantFrom(1, 1, 2),
    allowSelfApproval: fc.boolean(),
    expiryMinutes: fc.integer({ min: 2, max: 20 }),
    autoApprove: fc.constantFrom('allowed', 'allowed', 'forbidden'),
  });
const initialConfig: fc.Arbitrary<DConfig> = fc.record({
  prod: rule('prod'),
  other: rule('other'),
  tool: fc.constantFrom('v1', 'v1', 'v2') as fc.Arbitrary<ToolVersion>,
  hook: fc.constantFrom('h1', 'h1', undefined) as fc.Arbitrary<HookName | undefined>,
});

const user = fc.constantFrom(...USERS);
const input = fc.constantFrom(...INPUTS);
const ruleChange: fc.Arbitrary<RuleChange> = fc.record({
  required: fc.constantFrom(null, null, null, 1, 2),
  expiryMinutes: fc.constantFrom(null, null, 1, 2, 3, 4, 5, 8, 20),
  autoApprove: fc.constantFrom(null, null, null, 'allowed', 'forbidden'),
});
const clickAction: fc.Arbitrary<Action> = fc.record({
  kind: fc.constant('click'),
  step: fc.nat(),
  smart: fc.boolean(),
  click: fc.record({ kind: fc.constantFrom('approve', 'approve', 'deny', 'edit', 'edit'), user, version: fc.constantFrom('current', 'current', 'current', 'previous'), input }),
});
const actionsWithoutCrashes: Array<fc.Arbitrary<Action>> = [
  fc.record({ kind: fc.constant('propose'), requester: user, thread: fc.nat(1), input, hook: fc.constantFrom('approve', 'approve', 'deny', 'abstain', 'abstain') }),
  fc.record({ kind: fc.constant('propose'), requester: user, thread: fc.nat(1), input, hook: fc.constantFrom('approve', 'approve', 'deny', 'abstain', 'abstain') }),
  ...Array.from({ length: 5 }, () => clickAction),
  fc.record({ kind: fc.constant('tick'), minutes: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ kind: fc.constant('tick'), minutes: fc.integer({ min: 1, max: 6 }) }),
  fc.record({ kind: fc.constant('sweep') }),
  fc.record({ kind: fc.constant('resume'), step: fc.nat() }),
  fc.record({ kind: fc.constant('resume'), step: fc.nat() }),
  fc.record({ kind: fc.constant('new-message'), step: fc.nat(), user }),
  fc.record({ kind: fc.constant('deploy-expiry'), step: fc.nat(), offset: fc.integer({ min: -1, max: 2 }) }),
  ...Array.from({ length: 2 }, () =>
    fc.record({
      kind: fc.constant('deploy'),
      prod: ruleChange,
      other: ruleChange,
      tool: fc.constantFrom(null, null, 'v1', 'v2', 'removed') as fc.Arbitrary<ToolVersion | null>,
      hook: fc.constantFrom(null, null, 'none', 'h1', 'h2') as fc.Arbitrary<HookName | 'none' | null>,
    }),
  ),
];

const crashActions: Array<fc.Arbitrary<Action>> = [fc.record({ kind: fc.constant('resume-crash'), step: fc.nat() }), fc.record({ kind: fc.constant('resume-crash'), step: fc.nat() })];

const describeStep = (step: DStep) => JSON.stringify(step, (_key, value) => (value instanceof Set ? [...value] : value));

function pick(model: DModel, index: number, states: ReadonlyArray<DStep['state']> = ['pending', 'complete']): DStep | undefined {
  const open = model.steps.filter((step) => states.includes(step.state));
  const pool = open.length > 0 && index % 5 !== 0 ? open : model.steps;
  return pool.length === 0 ? undefined : pool[Math.floor(index / 5) % pool.length];
}

/** Mostly a decided step (or one whose resume a dead process left), sometimes any. */
function pickToResume(model: DModel, index: number): DStep | undefined {
  const due = model.steps.filter((step) => step.state === 'complete' || (step.state === 'resumed' && step.interrupted));
  const pool = due.length > 0 && index % 5 !== 0 ? due : model.steps;
  return pool.length === 0 ? undefined : pool[Math.floor(index / 5) % pool.length];
}

async function snapshot(world: DeployWorld, stepId: string) {
  return JSON.stringify([await world.store.getStep(stepId), await world.store.listGrants({ teamId: TEAM, channel: CHANNEL })]);
}

function applied(rule: DRule, change: RuleChange): DRule {
  return {
    ...rule,
    ...(change.required === null ? {} : { required: change.required }),
    ...(change.expiryMinutes === null ? {} : { expiryMinutes: change.expiryMinutes }),
    ...(change.autoApprove === null ? {} : { autoApprove: change.autoApprove }),
  };
}

function checkRuns(model: DModel, step: DStep, ran: Execution[]) {
  for (const execution of ran) {
    expect(executionViolation(model, step, execution.input), `${JSON.stringify(execution)} for ${describeStep(step)} under ${JSON.stringify(model.config)}`).toBeUndefined();
    step.executed += 1;
  }
}

function settle(model: DModel, step: DStep, expected: ReturnType<typeof resumeOutcome>, ran: Execution[]) {
  expect(ran, `${JSON.stringify(expected)}: ${describeStep(step)} under ${JSON.stringify(model.config)}`).toHaveLength(expected.kind === 'run' ? 1 : 0);
  if (expected.kind === 'close') {
    step.outcome = 'denied';
    step.approvedVersion = undefined;
  }
  if (expected.kind !== 'no-op') step.state = 'resumed';
}

async function perform(action: Action, model: DModel, world: DeployWorld): Promise<void> {
  switch (action.kind) {
    case 'propose': {
      // The model cannot call a tool the config no longer has.
      if (model.config.tool === 'removed') return;
      const rule = model.config[action.input.namespace === 'prod' ? 'prod' : 'other'];
      const stepId = await world.propose({ requesterId: action.requester, threadTs: THREADS[action.thread]!, input: action.input, hook: action.hook });
      const step: DStep = {
        stepId,
        requester: action.requester,
        createdAt: model.now,
        expiresAt: model.now + rule.expiryMinutes * 60_000,
        tool: model.config.tool,
        state: 'pending',
        versions: [{ input: action.input, rule }],
        approvals: [new Set()],
        executed: 0,
      };
      const hook = model.config.hook;
      if (hook !== undefined && action.hook === 'deny') {
        step.state = 'complete';
        step.outcome = 'denied';
        step.decidedAt = model.now;
      } else if (hook !== undefined && action.hook === 'approve' && rule.autoApprove !== 'forbidden') {
        step.state = 'complete';
        step.outcome = 'approved';
        step.approvedVersion = 0;
        step.approvedByHook = hook;
        step.approvals[0]!.add(`hook:${hook}`);
        step.decidedAt = model.now;
      }
      count(`propose:${step.approvedByHook ? 'hook-approved' : step.outcome ?? 'waits'}`);
      model.steps.push(step);
      return;
    }
    case 'click': {
      const step = pick(model, action.step);
      if (!step) return;
      const stored = (await world.store.getStep(step.stepId))!;
      const call = stored.calls[0]!;
      const current = (call.versions?.length ?? 1) - 1;
      const version = action.click.version === 'previous' && current > 0 ? current - 1 : current;
      const before = await snapshot(world, step.stepId);
      const c = { ...action.click };
      if (action.smart && step.state === 'pending') {
        const rules = governing(model, step.versions.at(-1)!);
        const mayApprove = USERS.filter((candidate) => rules.eligible(candidate, step.requester) && !step.approvals.at(-1)!.has(candidate));
        if (mayApprove.length > 0) c.user = mayApprove[USERS.indexOf(c.user as (typeof USERS)[number]) % mayApprove.length]!;
      }
      const described = `${c.user} ${c.kind} ${JSON.stringify(c.input)} on ${describeStep(step)} under ${JSON.stringify(model.config)} at +${(model.now - step.createdAt) / 60_000}m`;
      const verdict = click(model, step, c);
      count(`click:${c.kind}:${verdict.kind}`);
      const outcome = await world.process.decider.record({
        stepId: step.stepId,
        approvalId: call.approvalId,
        userId: c.user,
        origin: { teamId: TEAM, channel: CHANNEL, membership: 'member' },
        action: c.kind === 'edit' ? { kind: 'edit', fromVersion: version, input: c.input, submittedInput: c.input } : c.kind === 'approve' ? { kind: 'approve', version } : { kind: 'deny' },
      });
      if (!outcome.recorded) count(`refusal:${outcome.message.slice(0, 40)}`);
      // A refusal's follow-up (closing a request it found expired), seen through as a listener does after answering.
      if (!outcome.recorded) await outcome.closing;
      expect(outcome.recorded, `${described}: ${outcome.recorded ? 'recorded' : outcome.message}`).toBe(verdict.kind === 'applied' || verdict.kind === 'closed-unapprovable');
      if (verdict.kind === 'expired') expect((await world.store.getStep(step.stepId))?.phase, described).toBe('complete');
      if (verdict.kind === 'refused') expect(await snapshot(world, step.stepId), `a refused click changed what is stored: ${described}`).toBe(before);
      return;
    }
    case 'tick':
      world.clock.now += action.minutes * 60_000;
      model.now = world.clock.now;
      return;
    case 'sweep':
      await world.process.sweeper.sweepOnce();
      for (const step of model.steps) {
        if (step.state === 'pending' && model.now >= step.expiresAt) {
          step.state = 'complete';
          step.outcome = 'expired';
          step.decidedAt = model.now;
        }
      }
      return;
    case 'resume': {
      const step = pickToResume(model, action.step);
      if (!step) return;
      const expected = resumeOutcome(model, step);
      const recovering = step.interrupted === true;
      count(`resume${recovering ? '(after crash)' : ''}:${expected.kind}${'why' in expected ? `:${expected.why.replace(/\d+/g, 'N')}` : ''}`);
      const ran = await world.resume(step.stepId);
      checkRuns(model, step, ran);
      if (recovering) {
        // The claim was made (under the config then in force); the stored decision stays as it was.
        expect(ran, `recovery: ${JSON.stringify(expected)}: ${describeStep(step)} under ${JSON.stringify(model.config)}`).toHaveLength(expected.kind === 'run' ? 1 : 0);
        step.interrupted = false;
        if (expected.kind === 'close') {
          // Nothing ran; whether the recovery also records the call as closed is its own choice.
          const stored = (await world.store.getStep(step.stepId))!;
          const outcome = stored.decisions[stored.calls[0]!.approvalId]?.outcome;
          expect(['approved', 'denied']).toContain(outcome);
          if (outcome === 'denied') {
            step.outcome = 'denied';
            step.approvedVersion = undefined;
          }
        }
        return;
      }
      settle(model, step, expected, ran);
      return;
    }
    case 'resume-crash': {
      const step = pick(model, action.step, ['complete']);
      if (step?.state !== 'complete') return;
      const expected = resumeOutcome(model, step);
      count(`resume-crash:${expected.kind}`);
      const ran = await world.resumeAndCrash(step.stepId);
      expect(ran, 'a process that died after the claim ran nothing').toHaveLength(0);
      if (expected.kind === 'close') {
        step.outcome = 'denied';
        step.approvedVersion = undefined;
      }
      step.state = 'resumed';
      if (expected.kind === 'run') step.interrupted = true;
      return;
    }
    case 'new-message': {
      const step = pick(model, action.step);
      if (!step) return;
      if (step.state === 'pending') {
        const ran = await world.newMessage(step.stepId, action.user);
        expect(ran).toHaveLength(0);
        step.state = 'superseded';
        step.outcome = 'superseded';
        return;
      }
      // A resume a dead process left is the resume item's to finish (the thread no longer waits on the step).
      const expected = step.interrupted ? ({ kind: 'no-op' } as const) : resumeOutcome(model, step);
      count(`new-message:${expected.kind}`);
      const ran = await world.newMessage(step.stepId, action.user);
      checkRuns(model, step, ran);
      settle(model, step, expected, ran);
      return;
    }
    case 'deploy-expiry': {
      // Half the time a decided step waiting for its resume, else one that waits for clicks.
      const approved = model.steps.filter((candidate) => candidate.state === 'complete' && candidate.outcome === 'approved');
      const step = action.step % 2 === 0 && approved.length > 0 ? approved[Math.floor(action.step / 2) % approved.length] : pick(model, action.step);
      if (!step) return;
      const version = step.versions[step.approvedVersion ?? step.versions.length - 1]!;
      const name = version.input.namespace === 'prod' ? 'prod' : 'other';
      const age = Math.floor(((step.decidedAt ?? model.now) - step.createdAt) / 60_000);
      const expiryMinutes = Math.max(1, age + action.offset);
      count(`deploy-expiry:${action.offset}`);
      const next: DConfig = { ...model.config, [name]: { ...model.config[name], expiryMinutes } };
      model.config = next;
      world.deploy(next);
      return;
    }
    case 'deploy': {
      const next: DConfig = {
        prod: applied(model.config.prod, action.prod),
        other: applied(model.config.other, action.other),
        tool: action.tool ?? model.config.tool,
        hook: action.hook === null ? model.config.hook : action.hook === 'none' ? undefined : action.hook,
      };
      model.config = next;
      world.deploy(next);
      return;
    }
  }
}

class Command implements fc.AsyncCommand<DModel, DeployWorld> {
  constructor(readonly action: Action) {}
  check(): boolean {
    return true;
  }
  async run(model: DModel, world: DeployWorld): Promise<void> {
    await perform(this.action, model, world);
    for (const step of model.steps) {
      expect(
        await observed(world.store, { stepId: step.stepId, question: false, state: step.state, ...(step.outcome ? { outcome: step.outcome } : {}), versions: step.versions, approvals: step.approvals, ...(step.approvedVersion === undefined ? {} : { approvedVersion: step.approvedVersion }) }),
        `after ${this.toString()}: ${describeStep(step)}`,
      ).toEqual(projection({ stepId: step.stepId, question: false, state: step.state, ...(step.outcome ? { outcome: step.outcome } : {}), versions: step.versions, approvals: step.approvals, ...(step.approvedVersion === undefined ? {} : { approvedVersion: step.approvedVersion }) }));
    }
  }
  toString(): string {
    return JSON.stringify(this.action);
  }
}

const stores: Array<[string, () => StateStore, number]> = [
  ['memory', () => createMemoryStore(), RUNS],
  ['redis', () => createRedisStore({ url: inject('redisUrl'), keyPrefix: `dmodel:${randomUUID()}:` }), Math.ceil(RUNS / 4)],
];

/**
 * Declares the property over both stores. `crashes`: some resumes die right after their claim
 * (`resume-crash`), and a later resume item finishes the turn in whatever process (and config)
 * picks it up.
 */
export function describeDeployModel({ crashes }: { crashes: boolean }): void {
  const actions = crashes ? [...actionsWithoutCrashes, ...crashActions] : actionsWithoutCrashes;
  describe.each(stores)(`the countersignature holds across deploys while cards wait${crashes ? ', and resumes die after their claim' : ''} (model-based, %s store)`, (_name, createStore, runs) => {
    it('for any sequence of proposals, hook verdicts, clicks, edits, deploys and resumes', async () => {
      await fc.assert(
        fc.asyncProperty(initialConfig, fc.commands(actions.map((arbitrary) => arbitrary.map((action) => new Command(action))), { maxCommands: 80, size: 'max' }), async (config, commands) => {
          const store = createStore();
          const startAt = Date.now();
          try {
            const world = createDeployWorld({ store, startAt, config });
            await fc.asyncModelRun(() => ({ model: { config, now: startAt, steps: [] }, real: world }), commands);
          } finally {
            await store.close();
          }
        }),
        { numRuns: runs },
      );
    }, 300_000);
  });
}
