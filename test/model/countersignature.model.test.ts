import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, inject, it } from 'vitest';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { createRedisStore } from '../../src/store/redis-store.js';
import type { StateStore } from '../../src/store/state-store.js';
import { allows, applyClick, coveringGrant, executionViolation, type Click, type Model, type ModelStep } from './countersignature-model.js';
import { CHANNEL, createWorld, INPUTS, policyOf, policySpec, TEAM, THREADS, USERS, type Input, type World } from './countersignature-world.js';
import { observed, projection } from './step-projection.js';

/**
 * Model-based test of the countersignature (see shared notes "integrity-and-fencing"): random
 * sequences of proposals, clicks (approve, deny, edit, grant, answer) by random people from the
 * right or the wrong workspace and channel, the clock, sweeps, supersedes, resumes and Try again,
 * on random policies, against the real decision code over the real Redis store and the memory
 * store. After every command the bot must agree with the model on what was allowed, a refusal
 * must leave the stored step and grants unchanged, and every call that ran must satisfy the
 * invariant: approved as exactly that input by enough distinct eligible people, or covered by a
 * valid grant, and run once.
 */

const RUNS = Number(process.env.PROPERTY_RUNS ?? 200);

type Action =
  | { kind: 'propose'; requester: string; thread: number; input: Input }
  | { kind: 'question'; requester: string; thread: number }
  | { kind: 'click'; step: number; click: Click }
  | { kind: 'tick'; minutes: number }
  | { kind: 'sweep' }
  | { kind: 'supersede'; step: number; user: string }
  | { kind: 'resume'; step: number }
  | { kind: 'retry'; requester: string; clicker: string; thread: number; input: Input };

const user = fc.constantFrom(...USERS);
const input = fc.constantFrom(...INPUTS);
const click: fc.Arbitrary<Click> = fc.record({
  kind: fc.constantFrom('approve', 'approve', 'deny', 'edit', 'edit', 'grant', 'grant', 'answer'),
  user,
  version: fc.constantFrom('current', 'current', 'current', 'previous'),
  origin: fc.constantFrom('same', 'same', 'same', 'same', 'same', 'same', 'other-team', 'other-channel', 'other-organisation'),
  input,
  grant: fc.record({ scope: fc.constantFrom('thread', 'channel'), hours: fc.constantFrom(1, 4), identical: fc.boolean() }),
});

const clickAction: fc.Arbitrary<Action> = fc.record({ kind: fc.constant('click'), step: fc.nat(), click });
/** Weighted towards clicks on open cards, where the promise is decided. */
const actions: Array<fc.Arbitrary<Action>> = [
  fc.record({ kind: fc.constant('propose'), requester: user, thread: fc.nat(1), input }),
  fc.record({ kind: fc.constant('propose'), requester: user, thread: fc.nat(1), input }),
  fc.record({ kind: fc.constant('question'), requester: user, thread: fc.nat(1) }),
  ...Array.from({ length: 7 }, () => clickAction),
  fc.record({ kind: fc.constant('tick'), minutes: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ kind: fc.constant('sweep') }),
  fc.record({ kind: fc.constant('supersede'), step: fc.nat(), user }),
  fc.record({ kind: fc.constant('resume'), step: fc.nat() }),
  fc.record({ kind: fc.constant('resume'), step: fc.nat() }),
  fc.record({ kind: fc.constant('retry'), requester: user, clicker: user, thread: fc.nat(1), input }),
];

/** Mostly a step that is still open (where clicks decide things), sometimes any step. */
function pick(model: Model, index: number): ModelStep | undefined {
  const open = model.steps.filter((step) => step.state === 'pending');
  const pool = open.length > 0 && index % 5 !== 0 ? open : model.steps;
  return pool.length === 0 ? undefined : pool[Math.floor(index / 5) % pool.length];
}

async function snapshot(world: World, stepId: string) {
  return JSON.stringify([await world.store.getStep(stepId), await world.store.listGrants({ teamId: TEAM, channel: CHANNEL })]);
}

/** A proposal through the gate: a grant runs it at once (it must be a valid one), else a card waits. */
async function propose(model: Model, world: World, call: { requester: string; threadTs: string; input: Input }): Promise<void> {
  const expected = coveringGrant(model, call);
  const result = await world.propose({ requesterId: call.requester, threadTs: call.threadTs, input: call.input });
  expect(result.ran, `grant coverage of ${JSON.stringify(call)}`).toBe(expected !== undefined);
  if (result.ran) return;
  const rule = model.spec[call.input.namespace === 'prod' ? 'prod' : 'other'];
  model.steps.push({
    stepId: result.stepId,
    requester: call.requester,
    threadTs: call.threadTs,
    question: false,
    requestedAt: model.now,
    expiresAt: model.now + rule.expiryMinutes * 60_000,
    state: 'pending',
    versions: [call.input],
    approvals: [new Set()],
    executed: 0,
  });
}

async function perform(action: Action, model: Model, world: World): Promise<void> {
  switch (action.kind) {
    case 'propose':
      return propose(model, world, { requester: action.requester, threadTs: THREADS[action.thread]!, input: action.input });
    case 'question': {
      const result = await world.propose({ requesterId: action.requester, threadTs: THREADS[action.thread]!, input: { service: 'ask', namespace: 'staging' } });
      if (result.ran) throw new Error('a question never runs');
      model.steps.push({ stepId: result.stepId, requester: action.requester, threadTs: THREADS[action.thread]!, question: true, requestedAt: model.now, expiresAt: Infinity, state: 'pending', versions: [], approvals: [], executed: 0 });
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
      const expected = allows(model, step, click);
      const origin = {
        teamId: click.origin === 'other-team' ? 'T0OTHER' : TEAM,
        channel: click.origin === 'other-channel' ? 'C0OTHER' : CHANNEL,
        membership: click.origin === 'other-organisation' ? ('external' as const) : ('member' as const),
      };
      const request = { stepId: step.stepId, approvalId: call.approvalId, userId: click.user, origin };
      const outcome = await world.decider.record({
        ...request,
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
      // A refusal's follow-up (closing a request it found expired), seen through as a listener does after answering.
      if (!outcome.recorded) await outcome.closing;
      expect(outcome.recorded, `${click.user} ${click.kind} on ${JSON.stringify(step)}: ${outcome.recorded ? 'recorded' : outcome.message}`).toBe(expected.allowed);
      if (expected.allowed) return applyClick(model, step, click);
      if (expected.expired) {
        // A click after the expiry closes the step at once, rather than at the next sweep.
        step.state = 'complete';
        step.outcome = 'expired';
        expect((await world.store.getStep(step.stepId))?.phase).toBe('complete');
        return;
      }
      expect(await snapshot(world, step.stepId), 'a refused click changed what is stored').toBe(before);
      return;
    }
    case 'tick':
      world.clock.now += action.minutes * 60_000;
      model.now = world.clock.now;
      return;
    case 'sweep':
      await world.sweeper.sweepOnce();
      for (const step of model.steps) {
        if (step.state === 'pending' && model.now >= step.expiresAt) {
          step.state = 'complete';
          step.outcome = 'expired';
        }
      }
      return;
    case 'supersede': {
      const step = pick(model, action.step);
      if (!step) return;
      await world.supersede(step.stepId, action.user);
      if (step.state === 'pending') {
        step.state = 'superseded';
        step.outcome ??= 'superseded';
      }
      return;
    }
    case 'resume': {
      const step = pick(model, action.step);
      if (!step) return;
      const ran = await world.resume(step.stepId);
      for (const execution of ran) {
        expect(executionViolation(model, step, execution.input), `${JSON.stringify(execution)} for ${JSON.stringify(step)}`).toBeUndefined();
        step.executed += 1;
      }
      const expectedRuns = step.state === 'complete' && step.outcome === 'approved' ? 1 : 0;
      expect(ran, `resume of ${JSON.stringify(step)}`).toHaveLength(expectedRuns);
      if (step.state === 'complete') step.state = 'resumed';
      return;
    }
    case 'retry': {
      // A turn by `requester` failed; `clicker` presses Try again. The turn stays the requester's.
      const judgement = world.judgeRetry({ id: 'f1', requesterId: action.requester, at: model.now }, { clickedBy: action.clicker, failureId: 'f1' });
      expect(judgement.allowed, `${action.clicker} retrying ${action.requester}'s turn`).toBe(action.clicker === action.requester);
      if (!judgement.allowed) return;
      expect(judgement.requesterId).toBe(action.requester);
      return propose(model, world, { requester: judgement.requesterId, threadTs: THREADS[action.thread]!, input: action.input });
    }
  }
}

class Command implements fc.AsyncCommand<Model, World> {
  constructor(readonly action: Action) {}
  check(): boolean {
    return true;
  }
  async run(model: Model, world: World): Promise<void> {
    await perform(this.action, model, world);
    // After every command, every step as stored must be what the model says it is.
    for (const step of model.steps) expect(await observed(world.store, step), `after ${this.toString()}`).toEqual(projection(step));
  }
  toString(): string {
    return JSON.stringify(this.action);
  }
}

// The logic is the same over both stores; Redis round trips cost more, so it gets fewer runs.
// Each on the world's clock: grants are stamped, and their ends judged, by the store's.
const stores: Array<[string, (clock: { now: number }) => StateStore, number]> = [
  ['memory', (clock) => createMemoryStore({ now: () => clock.now }), RUNS],
  ['redis', (clock) => createRedisStore({ url: inject('redisUrl'), keyPrefix: `model:${randomUUID()}:`, serverClock: () => clock.now }), Math.ceil(RUNS / 3)],
];

describe.each(stores)('the countersignature holds (model-based, %s store)', (_name, createStore, runs) => {
  it('for any sequence of actions by anyone, on any policy', async () => {
    await fc.assert(
      fc.asyncProperty(policySpec, fc.commands(actions.map((arbitrary) => arbitrary.map((action) => new Command(action))), { maxCommands: 60, size: 'max' }), async (spec, commands) => {
        const clock = { now: Date.now() };
        const store = createStore(clock);
        try {
          const world = createWorld({ store, policy: policyOf(spec), clock });
          await fc.asyncModelRun(() => ({ model: { spec, now: clock.now, steps: [], grants: [] }, real: world }), commands);
        } finally {
          await store.close();
        }
      }),
      { numRuns: runs },
    );
  }, 120_000);
});
