import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { createRedisStore } from '../../src/store/redis-store.js';
import type { StateStore } from '../../src/store/state-store.js';
import type { Click } from './countersignature-model.js';
import { CHANNEL, INPUTS, policyOf, TEAM, THREADS, USERS, type Input, type PolicySpec, type RuleSpec } from './countersignature-world.js';
import { allowsX, applyClickX, covers, coveringGrantX, eligibleNow, newGroups, resumeOutcome, ruleOf, type XModel, type XStep } from './extended-model.js';
import { createExtendedWorld, type Execution, type ExtendedWorld } from './extended-world.js';
import { observed, projection } from './step-projection.js';

/**
 * The model-based test of the countersignature, extended with what the first model did not reach:
 * the approving group changing and Slack failing to answer for it (at the click, at the grant
 * lookup, at the re-check when the step resumes: approvals that wait and are closed after five
 * minutes, approvals of people who left the group), grants revoked or expiring while a call they
 * let through waits to start (the grant is checked in the executing marker's write), newer
 * messages on decided steps (resumed at once, never waiting), members whose membership Slack could
 * not confirm, and resumes through the bot's own resumer. After every command the stored steps must
 * be what the model says, and every call that ran must have been approved as exactly that input
 * by enough people eligible now, or let through by a grant that still held when it started, and
 * run once.
 */

const RUNS = Number(process.env.PROPERTY_RUNS ?? 200);

/** How often each outcome was reached (MODEL_STATS=1 prints them): a model that never reaches a branch proves nothing about it. */
const reached = new Map<string, number>();
const count = (what: string) => reached.set(what, (reached.get(what) ?? 0) + 1);
afterAll(() => {
  if (process.env.MODEL_STATS) console.log(JSON.stringify(Object.fromEntries([...reached].sort()), null, 1));
});

type Action =
  | { kind: 'propose'; requester: string; thread: number; input: Input }
  | { kind: 'question'; requester: string; thread: number }
  | { kind: 'click'; step: number; click: Click }
  | { kind: 'tick'; seconds: number }
  | { kind: 'sweep' }
  | { kind: 'new-message'; step: number; user: string }
  | { kind: 'resume'; step: number }
  | { kind: 'start'; call: number }
  | { kind: 'revoke'; grant: number; user: string }
  | { kind: 'groups'; readable: boolean }
  | { kind: 'membership'; user: string; member: boolean };

/** Weighted towards the approving group, whose reads can fail and whose members change. */
const ruleSpec: fc.Arbitrary<RuleSpec> = fc.record({
  approvers: fc.oneof(
    { arbitrary: fc.constant({ kind: 'group' } as const), weight: 3 },
    { arbitrary: fc.constant({ kind: 'channel' } as const), weight: 1 },
    { arbitrary: fc.subarray([...USERS], { minLength: 3, maxLength: 3 }).map((users) => ({ kind: 'users' as const, users })), weight: 1 },
  ),
  required: fc.constantFrom(1, 1, 1, 2),
  allowSelfApproval: fc.boolean(),
  expiryMinutes: fc.integer({ min: 2, max: 20 }),
  grants: fc.constantFrom('allowed', 'allowed', 'identicalArguments', 'forbidden'),
});
const policySpec: fc.Arbitrary<PolicySpec> = fc.record({ prod: ruleSpec, other: ruleSpec });

const user = fc.constantFrom(...USERS);
const input = fc.constantFrom(...INPUTS);
const click: fc.Arbitrary<Click> = fc.record({
  kind: fc.constantFrom('approve', 'approve', 'deny', 'edit', 'edit', 'grant', 'grant', 'answer'),
  user,
  version: fc.constantFrom('current', 'current', 'current', 'previous'),
  origin: fc.constantFrom('same', 'same', 'same', 'same', 'same', 'same', 'other-team', 'other-channel', 'other-organisation', 'unverified' as Click['origin']),
  input,
  grant: fc.record({ scope: fc.constantFrom('thread', 'channel'), hours: fc.constantFrom(1, 4), identical: fc.boolean() }),
});

const clickAction: fc.Arbitrary<Action> = fc.record({ kind: fc.constant('click'), step: fc.nat(), click });
const actions: Array<fc.Arbitrary<Action>> = [
  fc.record({ kind: fc.constant('propose'), requester: user, thread: fc.nat(1), input }),
  fc.record({ kind: fc.constant('propose'), requester: user, thread: fc.nat(1), input }),
  fc.record({ kind: fc.constant('question'), requester: user, thread: fc.nat(1) }),
  ...Array.from({ length: 6 }, () => clickAction),
  fc.record({ kind: fc.constant('tick'), seconds: fc.constantFrom(0, 10, 20, 60, 120) }),
  fc.record({ kind: fc.constant('tick'), seconds: fc.constantFrom(10, 30, 90, 300, 3600) }),
  fc.record({ kind: fc.constant('sweep') }),
  fc.record({ kind: fc.constant('new-message'), step: fc.nat(), user }),
  fc.record({ kind: fc.constant('resume'), step: fc.nat() }),
  fc.record({ kind: fc.constant('resume'), step: fc.nat() }),
  fc.record({ kind: fc.constant('resume'), step: fc.nat() }),
  fc.record({ kind: fc.constant('start'), call: fc.nat() }),
  fc.record({ kind: fc.constant('start'), call: fc.nat() }),
  fc.record({ kind: fc.constant('revoke'), grant: fc.nat(), user }),
  fc.record({ kind: fc.constant('groups'), readable: fc.boolean() }),
  fc.record({ kind: fc.constant('membership'), user, member: fc.boolean() }),
];

function pick(model: XModel, index: number, states: ReadonlyArray<XStep['state']> = ['pending', 'complete']): XStep | undefined {
  const open = model.steps.filter((step) => states.includes(step.state));
  const pool = open.length > 0 && index % 5 !== 0 ? open : model.steps;
  return pool.length === 0 ? undefined : pool[Math.floor(index / 5) % pool.length];
}

async function snapshot(world: ExtendedWorld, stepId: string) {
  return JSON.stringify([await world.store.getStep(stepId), await world.store.listGrants({ teamId: TEAM, channel: CHANNEL })]);
}

/** The invariant for a call that ran after its step: approved as exactly this input by enough people eligible now; never twice. */
function executionViolation(model: XModel, step: XStep, execution: Execution): string | undefined {
  if (step.executed > 0) return 'ran twice';
  if (step.outcome !== 'approved' || step.approvedVersion === undefined) return `ran without approval (outcome ${step.outcome ?? 'none'})`;
  const version = step.versions[step.approvedVersion]!;
  if (JSON.stringify(version) !== JSON.stringify(execution.input)) return `ran ${JSON.stringify(execution.input)} but ${JSON.stringify(version)} was approved`;
  const rule = ruleOf(model, version);
  const approvers = [...step.approvals[step.approvedVersion]!];
  if (approvers.length < rule.required) return `ran with ${approvers.length} of ${rule.required} approvals`;
  const wrong = approvers.find((who) => !eligibleNow(model, rule, who, step.requester));
  return wrong ? `counted ${wrong}, who may not approve now` : undefined;
}

async function propose(model: XModel, world: ExtendedWorld, call: { requester: string; threadTs: string; input: Input }): Promise<void> {
  const covering = coveringGrantX(model, call);
  const result = await world.propose({ requesterId: call.requester, threadTs: call.threadTs, input: call.input });
  expect('queued' in result, `grant coverage of ${JSON.stringify(call)} by ${JSON.stringify(covering)}`).toBe(covering.length > 0);
  if ('queued' in result) {
    const grantId = world.queued.find((queued) => queued.id === result.queued)!.grantId;
    const grant = covering.find((candidate) => candidate.grantId === grantId);
    expect(grant, `the gate used grant ${grantId}, which the model says does not cover ${JSON.stringify(call)}`).toBeDefined();
    model.queued.push({ id: result.queued, grant: grant!, requester: call.requester, threadTs: call.threadTs, input: call.input });
    return;
  }
  const rule = ruleOf(model, call.input);
  model.steps.push({
    stepId: result.stepId,
    requester: call.requester,
    threadTs: call.threadTs,
    question: false,
    createdAt: model.now,
    expiresAt: model.now + rule.expiryMinutes * 60_000,
    state: 'pending',
    versions: [call.input],
    approvals: [new Set()],
    readSlots: new Set(),
    executed: 0,
  });
}

function checkRuns(model: XModel, step: XStep, ran: Execution[]) {
  for (const execution of ran) {
    expect(executionViolation(model, step, execution), `${JSON.stringify(execution)} for ${JSON.stringify(step, (_k, v) => (v instanceof Set ? [...v] : v))}`).toBeUndefined();
    step.executed += 1;
  }
}

/** Applies what the model says a resume (or a newer message on a decided step) does. */
function settle(step: XStep, expected: ReturnType<typeof resumeOutcome>, ran: Execution[]) {
  const described = `${expected}: ${JSON.stringify(step, (_k, v) => (v instanceof Set ? [...v] : v))}`;
  expect(ran, described).toHaveLength(expected === 'run' ? 1 : 0);
  if (expected === 'close') {
    step.outcome = 'denied';
    step.approvedVersion = undefined;
  }
  if (expected === 'run' || expected === 'close' || expected === 'nothing-runs') step.state = 'resumed';
}

async function perform(action: Action, model: XModel, world: ExtendedWorld): Promise<void> {
  switch (action.kind) {
    case 'propose':
      return propose(model, world, { requester: action.requester, threadTs: THREADS[action.thread]!, input: action.input });
    case 'question': {
      const result = await world.propose({ requesterId: action.requester, threadTs: THREADS[action.thread]!, input: { service: 'ask', namespace: 'staging' } });
      if (!('stepId' in result)) throw new Error('a question never runs');
      model.steps.push({
        stepId: result.stepId,
        requester: action.requester,
        threadTs: THREADS[action.thread]!,
        question: true,
        createdAt: model.now,
        expiresAt: Infinity,
        state: 'pending',
        versions: [],
        approvals: [],
        readSlots: new Set(),
        executed: 0,
      });
      return;
    }
    case 'click': {
      const step = pick(model, action.step);
      if (!step) return;
      const { click } = action;
      const stored = await world.store.getStep(step.stepId);
      const call = stored!.calls[0]!;
      const current = (call.versions?.length ?? 1) - 1;
      const version = click.version === 'previous' && current > 0 ? current - 1 : current;
      const before = await snapshot(world, step.stepId);
      const grantsBefore = new Set((await world.store.listGrants({ teamId: TEAM, channel: CHANNEL })).map((grant) => grant.grantId));
      const expected = allowsX(model, step, click);
      const origin = {
        teamId: click.origin === 'other-team' ? 'T0OTHER' : TEAM,
        channel: click.origin === 'other-channel' ? 'C0OTHER' : CHANNEL,
        membership: click.origin === 'other-organisation' ? ('external' as const) : click.origin === ('unverified' as Click['origin']) ? ('unverified' as const) : ('member' as const),
      };
      const outcome = await world.decider.record({
        stepId: step.stepId,
        approvalId: call.approvalId,
        userId: click.user,
        origin,
        action:
          click.kind === 'edit'
            ? { kind: 'edit', fromVersion: version, input: click.input, submittedInput: click.input }
            : click.kind === 'grant'
              ? { kind: 'approve', version, grant: { scope: click.grant.scope, hours: click.grant.hours, identicalArgumentsOnly: click.grant.identical } }
              : click.kind === 'answer'
                ? { kind: 'answer', answer: 'eu' }
                : click.kind === 'approve'
                  ? { kind: 'approve', version }
                  : { kind: 'deny' },
      });
      count(`click:${click.kind}:${expected.allowed ? 'allowed' : expected.expired ? 'expired' : 'refused'}`);
      // A refusal's follow-up (closing a request it found expired), seen through as a listener does after answering.
      if (!outcome.recorded) await outcome.closing;
      expect(outcome.recorded, `${click.user} ${click.kind} on ${JSON.stringify(step, (_k, v) => (v instanceof Set ? [...v] : v))}: ${outcome.recorded ? 'recorded' : outcome.message}`).toBe(expected.allowed);
      if (expected.allowed) {
        const grant = applyClickX(model, step, click);
        const created = (await world.store.listGrants({ teamId: TEAM, channel: CHANNEL })).filter((stored) => !grantsBefore.has(stored.grantId));
        expect(created, 'grants the click created').toHaveLength(grant ? 1 : 0);
        if (grant) grant.grantId = created[0]!.grantId;
        return;
      }
      if (expected.expired) {
        step.state = 'complete';
        step.outcome = 'expired';
        step.decidedAt = model.now;
        expect((await world.store.getStep(step.stepId))?.phase).toBe('complete');
        return;
      }
      expect(await snapshot(world, step.stepId), 'a refused click changed what is stored').toBe(before);
      return;
    }
    case 'tick':
      world.clock.now += action.seconds * 1000;
      model.now = world.clock.now;
      return;
    case 'sweep':
      await world.sweeper.sweepOnce();
      for (const step of model.steps) {
        if (step.state === 'pending' && model.now >= step.expiresAt) {
          step.state = 'complete';
          step.outcome = 'expired';
          step.decidedAt = model.now;
        }
      }
      return;
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
      const expected = resumeOutcome(model, step, { waits: false });
      count(`new-message:${expected}`);
      const ran = await world.newMessage(step.stepId, action.user);
      checkRuns(model, step, ran);
      settle(step, expected, ran);
      return;
    }
    case 'resume': {
      const step = pick(model, action.step, ['complete']);
      if (!step) return;
      const expected = resumeOutcome(model, step, { waits: true });
      count(`resume:${expected}${expected === 'close' && !model.groups.readable ? ' (unchecked)' : ''}`);
      const ran = await world.resume(step.stepId);
      checkRuns(model, step, ran);
      settle(step, expected, ran);
      return;
    }
    case 'start': {
      if (model.queued.length === 0) return;
      const call = model.queued[action.call % model.queued.length]!;
      model.queued.splice(model.queued.indexOf(call), 1);
      const expected = covers(model, call.grant, call);
      count(`start:${expected ? 'ran' : call.grant.revoked ? 'revoked' : call.grant.expiresAt <= model.now ? 'expired' : 'no-longer-covers'}`);
      const result = await world.startQueued(call.id);
      expect(result, `start of ${JSON.stringify(call)} at ${model.now}`).toBe(expected ? 'ran' : 'not-run');
      return;
    }
    case 'revoke': {
      const made = model.grants.filter((grant) => grant.grantId !== undefined);
      if (made.length === 0) return;
      const grant = made[action.grant % made.length]!;
      const expected = !grant.revoked && grant.expiresAt > model.now && (action.user === grant.grantor || eligibleNow(model, model.spec[grant.rule], action.user, grant.grantor));
      count(`revoke:${expected}`);
      const revoked = await world.revoke(grant.grantId!, action.user);
      expect(revoked, `${action.user} revoking ${JSON.stringify(grant)}`).toBe(expected);
      if (revoked) grant.revoked = true;
      return;
    }
    case 'groups':
      world.groups.readable = action.readable;
      model.groups.readable = action.readable;
      return;
    case 'membership':
      for (const members of [world.groups.members, model.groups.members]) {
        if (action.member) members.add(action.user);
        else members.delete(action.user);
      }
      return;
  }
}

class Command implements fc.AsyncCommand<XModel, ExtendedWorld> {
  constructor(readonly action: Action) {}
  check(): boolean {
    return true;
  }
  async run(model: XModel, world: ExtendedWorld): Promise<void> {
    await perform(this.action, model, world);
    for (const step of model.steps) expect(await observed(world.store, step), `after ${this.toString()}`).toEqual(projection(step));
  }
  toString(): string {
    return JSON.stringify(this.action);
  }
}

// Each on the world's clock: grants are stamped, and their ends judged, by the store's.
const stores: Array<[string, (clock: { now: number }) => StateStore, number]> = [
  ['memory', (clock) => createMemoryStore({ now: () => clock.now }), RUNS],
  ['redis', (clock) => createRedisStore({ url: inject('redisUrl'), keyPrefix: `xmodel:${randomUUID()}:`, serverClock: () => clock.now }), Math.ceil(RUNS / 4)],
];

describe.each(stores)('the countersignature holds with changing groups, revoked grants and resumes (model-based, %s store)', (_name, createStore, runs) => {
  it('for any sequence of actions by anyone, on any policy', async () => {
    await fc.assert(
      fc.asyncProperty(policySpec, fc.commands(actions.map((arbitrary) => arbitrary.map((action) => new Command(action))), { maxCommands: 70, size: 'max' }), async (spec, commands) => {
        const clock = { now: Date.now() };
        const store = createStore(clock);
        try {
          const world = createExtendedWorld({ store, policy: policyOf(spec), clock });
          await fc.asyncModelRun(() => ({ model: { spec, now: clock.now, steps: [], grants: [], queued: [], groups: newGroups() }, real: world }), commands);
        } finally {
          await store.close();
        }
      }),
      { numRuns: runs },
    );
  }, 600_000);
});
