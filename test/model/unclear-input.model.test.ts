import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { createRedisStore } from '../../src/store/redis-store.js';
import type { StateStore } from '../../src/store/state-store.js';
import { CHANNEL, TEAM, THREADS, USERS } from './countersignature-world.js';
import { observed, projection } from './step-projection.js';
import {
  candidates,
  click,
  eligibleUnder,
  executionViolation,
  governing,
  NAMESPACES,
  openStep,
  predictable,
  proposalOutcome,
  resumeOutcome,
  type UApprovers,
  type UClick,
  type UCondition,
  type UInput,
  type UModel,
  type UPolicy,
  type URule,
  type USettings,
  type UStep,
} from './unclear-input-model.js';
import { createUnclearInputWorld, policyYaml, type Execution, type HookVerdict, type UnclearInputWorld } from './unclear-input-world.js';

/**
 * Model-based test of "an input that may fall under several rules needs a countersignature that
 * satisfies every rule it may fall under" (README, Approval policy; shared notes
 * "integrity-and-fencing"). Random policies of one tool with two or three rules (`input:`
 * conditions on a list field, `namespaces`, with `oneOf` / `equals`; the rule for every input or
 * the defaults; one may say `approval: never`), random approvers (named users, one of two user groups
 * with random members, the channel, the requester, or users and a group), quorums of 1 or 2,
 * self-approval, `autoApprove` and `grants` (allowed, identical arguments only, forbidden). Random calls, many of them unclear (a list spanning rules, a `null`, a `null` inside a
 * list, the field left out), through the bot's gate (a scheduled turn's auto-approve list, grants)
 * and the approval hook; random clicks (approve, deny, edit, approve and allow later calls) by
 * random people, often by someone the model says may approve, some reaching the process still on
 * the config before the last deploy; deploys that change one setting of one rule; the clock,
 * sweeps, resumes and newer messages. A small reference model
 * (`unclear-input-model.ts`) says what each does; after every command the stored steps must be
 * what it says, and every call that runs (at the gate or at a resume) must be one the model lets
 * run: no countersignature bypass, and the model and the bot agree on what runs.
 */
const RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);
/**
 * `UNCLEAR_MODEL_RUNS_ONLY=1`: check only what runs (at the gate and at resumes), not whether each
 * click was recorded nor the stored steps: shows that the run property alone catches a hole.
 */
const RUNS_ONLY = process.env.UNCLEAR_MODEL_RUNS_ONLY === '1';

const reached = new Map<string, number>();
const count = (what: string) => reached.set(what, (reached.get(what) ?? 0) + 1);
afterAll(() => {
  if (process.env.MODEL_STATS) console.log(JSON.stringify(Object.fromEntries([...reached].sort()), null, 1));
});

// ---------------------------------------------------------------------------------------------
// Arbitraries

const user = fc.constantFrom(...USERS);
const namespace = fc.constantFrom(...NAMESPACES);
const namespaces = fc.oneof(
  { weight: 4, arbitrary: fc.uniqueArray(namespace, { minLength: 1, maxLength: 3 }) },
  { weight: 1, arbitrary: fc.array(fc.option(namespace, { nil: null, freq: 3 }), { maxLength: 3 }) },
  { weight: 2, arbitrary: namespace },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constant(undefined) },
);
const input: fc.Arbitrary<UInput> = fc
  .record({ service: fc.constantFrom('api', 'api', 'worker'), namespaces })
  .map(({ service, namespaces: value }) => (value === undefined ? { service } : { service, namespaces: value }));

const group = fc.constantFrom(0, 0, 1);
const approvers: fc.Arbitrary<UApprovers> = fc.oneof(
  { weight: 2, arbitrary: fc.constant({ kind: 'channel' } as const) },
  { weight: 1, arbitrary: fc.constant({ kind: 'requester' } as const) },
  { weight: 3, arbitrary: group.map((index) => ({ kind: 'group' as const, group: index })) },
  { weight: 3, arbitrary: fc.subarray([...USERS], { minLength: 1, maxLength: 3 }).map((users) => ({ kind: 'users' as const, users })) },
  { weight: 2, arbitrary: fc.record({ users: fc.subarray([...USERS], { minLength: 1, maxLength: 2 }), group }).map(({ users, group: index }) => ({ kind: 'users+group' as const, users, group: index })) },
);

/**
 * Settings the loader accepts: a quorum no larger than the people named, where only people are
 * named; self-approval where the approvers are the requester.
 */
function fitted<T extends USettings>(settings: T): T {
  const named = settings.approvers.kind === 'users' ? settings.approvers.users.length : settings.approvers.kind === 'requester' ? 1 : Infinity;
  return { ...settings, required: Math.min(settings.required, named), ...(settings.approvers.kind === 'requester' ? { allowSelfApproval: true } : {}) };
}

const settings: fc.Arbitrary<USettings> = fc
  .record({
    approvers,
    required: fc.constantFrom(1, 1, 2),
    allowSelfApproval: fc.boolean(),
    expiryMinutes: fc.constantFrom(5, 10, 30),
    autoApprove: fc.constantFrom('allowed', 'allowed', 'forbidden'),
    grants: fc.constantFrom('allowed', 'allowed', 'identicalArguments', 'forbidden'),
  })
  .map(fitted);

const condition: fc.Arbitrary<UCondition> = fc
  .record({ op: fc.constantFrom('oneOf', 'oneOf', 'equals'), values: fc.uniqueArray(namespace, { minLength: 1, maxLength: 2 }) })
  .map((value) => (value.op === 'equals' ? { op: 'equals' as const, values: [value.values[0]!] } : value));

const inputRule = fc.record({ condition, approval: fc.constantFrom('always', 'always', 'always', 'always', 'never'), settings }).map(({ condition: when, approval, settings: own }) => ({ ...own, condition: when, approval }));

const policyArbitrary: fc.Arbitrary<UPolicy> = fc
  .record({
    inputRules: fc.array(inputRule, { minLength: 1, maxLength: 2 }),
    general: fc.option(settings, { nil: undefined, freq: 4 }),
    defaults: settings,
    groupMembers: fc.tuple(fc.subarray([...USERS], { minLength: 1, maxLength: 4 }), fc.subarray([...USERS], { minLength: 1, maxLength: 3 })),
  })
  .map(({ inputRules, general, defaults, groupMembers }) => ({
    inputRules: inputRules.map((rule, index): URule => ({ ...rule, name: `r${index}` })),
    ...(general === undefined ? {} : { general: { ...general, name: 'general', approval: 'always' as const } }),
    defaults,
    groupMembers,
  }));

type Change = { field: 'approvers' | 'required' | 'allowSelfApproval' | 'autoApprove' | 'grants' | 'expiryMinutes' | 'condition' | 'approval'; to: USettings; condition: UCondition };

type Action =
  | { kind: 'propose'; requester: string; thread: number; input: UInput; hook: HookVerdict; scheduled: boolean }
  /**
   * `smart`: the clicker is one the model says may approve the version on the card now (when anyone
   * may). `stale`: the click reaches the process still on the config before the last deploy.
   */
  | { kind: 'click'; step: number; click: UClick; smart: boolean; stale: boolean }
  | { kind: 'tick'; minutes: number }
  | { kind: 'sweep' }
  | { kind: 'resume'; step: number }
  | { kind: 'new-message'; step: number; user: string }
  /** A deploy that changes one setting of one rule (`target`: an input rule, the rule for every input, or the defaults). */
  | { kind: 'deploy'; target: number; change: Change };

const clickArbitrary: fc.Arbitrary<UClick> = fc.record({
  kind: fc.constantFrom('approve', 'approve', 'approve', 'deny', 'edit', 'edit', 'grant', 'grant'),
  user,
  version: fc.constantFrom('current', 'current', 'current', 'previous'),
  input,
  grant: fc.record({ scope: fc.constantFrom('thread', 'channel'), hours: fc.constantFrom(1, 4), identical: fc.boolean() }),
});
const clickAction: fc.Arbitrary<Action> = fc.record({ kind: fc.constant('click'), step: fc.nat(), smart: fc.constantFrom(true, true, false), stale: fc.constantFrom(false, false, false, false, true), click: clickArbitrary });
const proposeAction: fc.Arbitrary<Action> = fc.record({
  kind: fc.constant('propose'),
  requester: user,
  thread: fc.nat(1),
  input,
  hook: fc.constantFrom('approve', 'deny', 'abstain', 'abstain', 'abstain', 'abstain'),
  scheduled: fc.constantFrom(false, false, false, true),
});
const actions: Array<fc.Arbitrary<Action>> = [
  proposeAction,
  proposeAction,
  proposeAction,
  ...Array.from({ length: 6 }, () => clickAction),
  fc.record({ kind: fc.constant('tick'), minutes: fc.integer({ min: 0, max: 4 }) }),
  fc.record({ kind: fc.constant('sweep') }),
  fc.record({ kind: fc.constant('resume'), step: fc.nat() }),
  fc.record({ kind: fc.constant('resume'), step: fc.nat() }),
  fc.record({ kind: fc.constant('new-message'), step: fc.nat(), user }),
  fc.record({
    kind: fc.constant('deploy'),
    target: fc.nat(3),
    change: fc.record({
      field: fc.constantFrom('approvers', 'approvers', 'required', 'allowSelfApproval', 'autoApprove', 'grants', 'expiryMinutes', 'condition', 'approval'),
      to: settings,
      condition,
    }),
  }),
];

// ---------------------------------------------------------------------------------------------
// Commands

const describeStep = (step: UStep) => JSON.stringify(step, (_key, value) => (value instanceof Set ? [...value] : value));

function pick(model: UModel, index: number, states: ReadonlyArray<UStep['state']> = ['pending']): UStep | undefined {
  const open = model.steps.filter((step) => states.includes(step.state));
  const pool = open.length > 0 && index % 5 !== 0 ? open : model.steps;
  return pool.length === 0 ? undefined : pool[Math.floor(index / 5) % pool.length];
}

async function snapshot(world: UnclearInputWorld, stepId: string) {
  return JSON.stringify([await world.store.getStep(stepId), await world.store.listGrants({ teamId: TEAM, channel: CHANNEL })]);
}

/** The policy after a deploy that changes one setting of one rule. */
function deployed(policy: UPolicy, target: number, change: Change): UPolicy {
  const next: UPolicy = structuredClone(policy);
  const rule: USettings & Partial<URule> = target < next.inputRules.length ? next.inputRules[target]! : target === next.inputRules.length && next.general ? next.general : next.defaults;
  switch (change.field) {
    case 'condition':
      if (rule.condition) rule.condition = change.condition;
      break;
    case 'approval':
      if (rule.condition) rule.approval = rule.approval === 'always' ? 'never' : 'always';
      break;
    default:
      (rule as unknown as Record<string, unknown>)[change.field] = change.to[change.field];
  }
  Object.assign(rule, fitted(rule));
  return next;
}

function checkRuns(model: UModel, step: UStep, ran: Execution[]) {
  for (const execution of ran) {
    expect(executionViolation(model, step, execution.input), `countersignature bypass: ${JSON.stringify(execution)} for ${describeStep(step)} under\n${policyYaml(model.policy)}`).toBeUndefined();
    step.executed += 1;
  }
}

function settle(model: UModel, step: UStep, expected: ReturnType<typeof resumeOutcome>, ran: Execution[]) {
  expect(ran, `runs of ${JSON.stringify(expected)}: ${describeStep(step)} under\n${policyYaml(model.policy)}`).toHaveLength(expected.kind === 'run' ? 1 : 0);
  if (expected.kind === 'close') {
    step.outcome = 'denied';
    delete step.approvedVersion;
  }
  if (expected.kind !== 'no-op') step.state = 'resumed';
}

async function perform(action: Action, model: UModel, world: UnclearInputWorld): Promise<void> {
  switch (action.kind) {
    case 'propose': {
      const call = { requester: action.requester, threadTs: THREADS[action.thread]!, input: action.input, scheduled: action.scheduled };
      const expected = proposalOutcome(model, call);
      const rules = candidates(model.policy, action.input);
      const described = `${JSON.stringify(call)} (candidates ${rules.map((rule) => rule.name).join(', ')}) under\n${policyYaml(model.policy)}`;
      const result = await world.propose({ requesterId: action.requester, threadTs: call.threadTs, input: action.input, hook: action.hook, scheduled: action.scheduled });
      count(`propose:${rules.length > 1 ? 'unclear' : 'clear'}:${'ran' in result ? result.ran : 'stepId' in result ? 'card' : 'not-run'}`);
      expect('notRun' in result, `the gate let ${described} through, but it did not start`).toBe(false);
      if (expected.kind !== 'grant-or-card') {
        expect(result, `gate for ${described}`).toEqual({ ran: expected.kind });
        return;
      }
      if ('ran' in result) {
        expect(result.ran, `countersignature bypass at the gate: the model says people (or a grant) must approve ${described}`).toBe('grant');
        const grant = model.grants.find((candidate) => candidate.grantId === result.grantId);
        expect(grant !== undefined && expected.safe.includes(grant), `countersignature bypass: grant ${JSON.stringify(grant)} let ${described} run`).toBe(true);
        if (!expected.expected.includes(grant!)) {
          // Safe, but given under rules that differ from the call's in something the bot's rule identity leaves out (a deploy changed it).
          count('propose:grant-covered-beyond-model');
          if (process.env.MODEL_STATS) console.log('grant covered beyond the model:', JSON.stringify(grant), described);
        }
        return;
      }
      expect(expected.expected, `a grant covers ${described}, yet it waits for a card`).toEqual([]);
      const step = openStep(model, { stepId: (result as { stepId: string }).stepId, requester: call.requester, threadTs: call.threadTs, input: call.input, hook: action.hook });
      count(`step:${rules.length > 1 ? 'unclear' : 'clear'}:${step.approvedByHook ? 'hook-approved' : (step.outcome ?? 'waits')}`);
      model.steps.push(step);
      return;
    }
    case 'click': {
      const step = pick(model, action.step);
      if (!step) return;
      // The process the click reaches: the one in force, or (during a rolling deploy) the one before it.
      const stale = action.stale && model.previous !== undefined && world.previous !== undefined;
      const inForce = model.policy;
      const judged: UModel = stale ? { ...model, policy: model.previous! } : model;
      const bot = stale ? world.previous! : world.process;
      const c = { ...action.click };
      if (action.smart && step.state === 'pending') {
        const sets = governing(judged, step.versions.at(-1)!);
        const may = USERS.filter((candidate) => eligibleUnder(judged.policy, sets, candidate, step.requester) && !step.approvals.at(-1)!.has(candidate));
        if (may.length > 0) c.user = may[USERS.indexOf(c.user as (typeof USERS)[number]) % may.length]!;
      }
      if (!predictable(judged, step, c)) {
        count('click:edit-after-deploy-skipped');
        return;
      }
      const stored = (await world.store.getStep(step.stepId))!;
      const call = stored.calls[0]!;
      const current = (call.versions?.length ?? 1) - 1;
      const version = c.version === 'previous' && current > 0 ? current - 1 : current;
      const before = await snapshot(world, step.stepId);
      const grantsBefore = new Set((await world.store.listGrants({ teamId: TEAM, channel: CHANNEL })).map((grant) => grant.grantId));
      const unclear = step.state === 'pending' && governing(judged, step.versions.at(-1)!).flat().length > 1;
      const described = `${c.user} ${c.kind}${c.kind === 'edit' ? ` to ${JSON.stringify(c.input)}` : ''}${stale ? ' (on the process before the last deploy)' : ''} on ${describeStep(step)} at +${(model.now - step.createdAt) / 60_000}m under\n${policyYaml(judged.policy)}`;
      const verdict = click(judged, step, c);
      // `judged` shares the steps and grants with `model`; only the config differs.
      model.grants = judged.grants;
      model.policy = inForce;
      count(`click:${unclear ? 'unclear' : 'clear'}:${c.kind}:${verdict.kind}${stale ? ':stale' : ''}`);
      const outcome = await bot.decider.record({
        stepId: step.stepId,
        approvalId: call.approvalId,
        userId: c.user,
        origin: { teamId: TEAM, channel: CHANNEL, membership: 'member' },
        action:
          c.kind === 'edit'
            ? { kind: 'edit', fromVersion: version, input: c.input, submittedInput: c.input }
            : c.kind === 'grant'
              ? { kind: 'approve', version, grant: { scope: c.grant.scope, hours: c.grant.hours, identicalArgumentsOnly: c.grant.identical } }
              : c.kind === 'approve'
                ? { kind: 'approve', version }
                : { kind: 'deny' },
      });
      // A refusal's follow-up (closing a request it found expired), seen through as a listener does after answering.
      if (!outcome.recorded) await outcome.closing;
      const created = (await world.store.listGrants({ teamId: TEAM, channel: CHANNEL })).filter((grant) => !grantsBefore.has(grant.grantId));
      const grant = verdict.kind === 'applied' ? verdict.grant : undefined;
      if (grant && created.length === 1) grant.grantId = created[0]!.grantId;
      if (RUNS_ONLY) return;
      expect(outcome.recorded, `${described}: ${outcome.recorded ? 'recorded' : outcome.message}`).toBe(verdict.kind === 'applied' || verdict.kind === 'closed');
      if (verdict.kind === 'expired') expect((await world.store.getStep(step.stepId))?.phase, described).toBe('complete');
      if (verdict.kind === 'refused') expect(await snapshot(world, step.stepId), `a refused click changed what is stored: ${described}`).toBe(before);
      expect(created, `grants created by ${described}`).toHaveLength(grant ? 1 : 0);
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
      const step = pick(model, action.step, ['complete']);
      if (!step) return;
      const expected = resumeOutcome(model, step);
      const unclear = step.versions.some((version) => version.stored.length > 1);
      count(`resume:${unclear ? 'unclear' : 'clear'}:${expected.kind}${'why' in expected ? `:${expected.why.replace(/\d+/g, 'N')}` : ''}`);
      const ran = await world.resume(step.stepId);
      checkRuns(model, step, ran);
      settle(model, step, expected, ran);
      return;
    }
    case 'new-message': {
      const step = pick(model, action.step, ['pending', 'complete']);
      if (!step) return;
      if (step.state === 'pending') {
        const ran = await world.newMessage(step.stepId, action.user);
        expect(ran).toHaveLength(0);
        step.state = 'superseded';
        step.outcome = 'superseded';
        return;
      }
      const expected = resumeOutcome(model, step);
      count(`new-message:${expected.kind}`);
      const ran = await world.newMessage(step.stepId, action.user);
      checkRuns(model, step, ran);
      settle(model, step, expected, ran);
      return;
    }
    case 'deploy': {
      const next = deployed(model.policy, action.target, action.change);
      count(`deploy:${action.change.field}`);
      model.previous = model.policy;
      model.policy = next;
      world.deploy(next);
      return;
    }
  }
}

class Command implements fc.AsyncCommand<UModel, UnclearInputWorld> {
  constructor(readonly action: Action) {}
  check(): boolean {
    return true;
  }
  async run(model: UModel, world: UnclearInputWorld): Promise<void> {
    await perform(this.action, model, world);
    if (RUNS_ONLY) return;
    for (const step of model.steps) {
      const projected = {
        stepId: step.stepId,
        question: false,
        state: step.state,
        ...(step.outcome ? { outcome: step.outcome } : {}),
        versions: step.versions,
        approvals: step.approvals,
        ...(step.approvedVersion === undefined ? {} : { approvedVersion: step.approvedVersion }),
      };
      expect(await observed(world.store, projected), `after ${this.toString()}: ${describeStep(step)} under\n${policyYaml(model.policy)}`).toEqual(projection(projected));
    }
  }
  toString(): string {
    return JSON.stringify(this.action);
  }
}

// ---------------------------------------------------------------------------------------------
// Regressions: the shortest sequences that caught planted holes, tried first on every run.

const own = (approvers: UApprovers, extra: Partial<USettings> = {}): USettings => ({
  approvers,
  required: 1,
  allowSelfApproval: false,
  expiryMinutes: 30,
  autoApprove: 'allowed',
  grants: 'allowed',
  ...extra,
});
const devRule = (settings: USettings): URule => ({ ...settings, name: 'r0', approval: 'always', condition: { op: 'oneOf', values: ['dev'] } });
const everyInput = (settings: USettings): URule => ({ ...settings, name: 'general', approval: 'always' });
const devAndProd: UInput = { service: 'api', namespaces: ['dev', 'prod'] };
const noClick: UClick = { kind: 'approve', user: 'U0ALICE', version: 'current', input: devAndProd, grant: { scope: 'thread', hours: 1, identical: false } };
const regressions: Array<[UPolicy, Action[]]> = [
  // The dev lead (Bob) alone must not approve a delete in dev and prod: Carol is both a dev lead and in SRE.
  [
    { inputRules: [devRule(own({ kind: 'users', users: ['U0BOB', 'U0CAROL'] }))], general: everyInput(own({ kind: 'group', group: 0 })), defaults: own({ kind: 'channel' }), groupMembers: [['U0CAROL', 'U0DAVE'], ['U0ERIN']] },
    [
      { kind: 'propose', requester: 'U0ALICE', thread: 0, input: devAndProd, hook: 'abstain', scheduled: false },
      { kind: 'click', step: 1, smart: false, stale: false, click: { ...noClick, user: 'U0BOB' } },
      { kind: 'resume', step: 1 },
    ],
  ],
  // A scheduled turn's auto-approve list must not run it where the rule for every input forbids automatic approval.
  [
    { inputRules: [devRule(own({ kind: 'users', users: ['U0BOB'] }))], general: everyInput(own({ kind: 'group', group: 0 }, { autoApprove: 'forbidden' })), defaults: own({ kind: 'channel' }), groupMembers: [['U0CAROL', 'U0DAVE'], ['U0ERIN']] },
    [{ kind: 'propose', requester: 'U0ALICE', thread: 0, input: devAndProd, hook: 'approve', scheduled: true }],
  ],
  // Two approvals (the rule for every input's quorum), not the dev rule's one: only Carol is under both, so nobody can approve it.
  [
    { inputRules: [devRule(own({ kind: 'users', users: ['U0BOB', 'U0CAROL'] }))], general: everyInput(own({ kind: 'users', users: ['U0CAROL', 'U0DAVE', 'U0ERIN'] }, { required: 2 })), defaults: own({ kind: 'channel' }), groupMembers: [['U0DAVE'], ['U0ERIN']] },
    [
      { kind: 'propose', requester: 'U0ALICE', thread: 0, input: devAndProd, hook: 'abstain', scheduled: false },
      { kind: 'click', step: 1, smart: false, stale: false, click: { ...noClick, user: 'U0CAROL' } },
      { kind: 'resume', step: 1 },
    ],
  ],
];

const stores: Array<[string, (clock: { now: number }) => StateStore, number]> = [
  ['memory', (clock) => createMemoryStore({ now: () => clock.now }), RUNS],
  ['redis', (clock) => createRedisStore({ url: inject('redisUrl'), keyPrefix: `umodel:${randomUUID()}:`, serverClock: () => clock.now }), Math.ceil(RUNS / 10)],
];

describe.each(stores)('an input that may fall under several rules needs a countersignature every one of them accepts (model-based, %s store)', (_name, createStore, runs) => {
  it('for any policy, calls, clicks, hook verdicts, grants, deploys and resumes', async () => {
    await fc.assert(
      fc.asyncProperty(policyArbitrary, fc.commands(actions.map((arbitrary) => arbitrary.map((action) => new Command(action))), { maxCommands: 60, size: 'max' }), async (policy, commands) => {
        const clock = { now: Date.now() };
        const store = createStore(clock);
        try {
          const world = createUnclearInputWorld({ store, clock, policy });
          await fc.asyncModelRun(() => ({ model: { policy, now: clock.now, steps: [], grants: [] }, real: world }), commands);
        } finally {
          await store.close();
        }
      }),
      { numRuns: runs, examples: regressions.map(([policy, sequence]): [UPolicy, Command[]] => [policy, sequence.map((action) => new Command(action))]) },
    );
  }, 300_000);
});

