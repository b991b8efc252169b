import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createMemoryAuditLog } from '../audit/memory-audit-log.js';
import type { ThreadMessenger } from '../conversation/thread-messenger.js';
import { createMemoryStore } from '../store/memory-store.js';
import type { StateStore } from '../store/state-store.js';
import { ReplyError } from '../store/write-not-run.js';
import { createCallDecider, type DecideCallOptions } from './decide-call.js';
import { click, createTestDecider, stepFor, storeStep } from './decide-call.test-support.js';
import type { PendingStep } from './pending-step.js';
import { makeStep } from './pending-step.test-support.js';

const logger = pino({ level: 'silent' });

function setup(options: { wrapStore?: (store: StateStore) => StateStore; cardRefreshes?: DecideCallOptions['cardRefreshes'] } = {}) {
  const audit = createMemoryAuditLog({ logger });
  const store = createMemoryStore({ audit });
  const { decider, submitted } = createTestDecider({ store: options.wrapStore ? options.wrapStore(store) : store, audit, ...(options.cardRefreshes ? { cardRefreshes: options.cardRefreshes } : {}) });
  return { store, audit, decider, submitted };
}

describe('deciding a call under an approver policy', () => {
  it('refuses someone the policy does not name, says who can approve, audits it and changes nothing', async () => {
    const { store: states, audit, decider, submitted } = setup();
    const step = await storeStep(states, stepFor('scale'));
    const outcome = await decider.record(click(step, 'U0MALLORY', { kind: 'approve', version: 0 }));
    expect(outcome).toEqual({ recorded: false, message: expect.stringContaining('Only <@U0ALICE> can approve this') });
    expect((await states.getStep(step.stepId))?.decisions).toEqual({});
    const events = await audit.read({ sinceMs: 0 });
    // With the step's channel, so it is kept in that channel's shard.
    expect(events).toEqual([expect.objectContaining({ type: 'action-refused', code: 'not-eligible', userId: 'U0MALLORY', action: 'approve', teamId: step.teamId, channel: step.channel })]);
    expect(submitted).toEqual([]);
    expect((await decider.record(click(step, 'U0MALLORY', { kind: 'deny' }))).recorded).toBe(false);
  });

  it('needs two distinct approvers for a quorum of two, and resumes once when it is reached', async () => {
    const { store: states, decider, submitted, audit } = setup();
    const step = await storeStep(states, stepFor('restart_service'));
    const first = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }));
    expect(first).toMatchObject({ recorded: true, completedStep: false });
    if (first.recorded) await decider.publish(first);
    expect(submitted).toEqual([]);
    expect(await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }))).toEqual({ recorded: false, message: expect.stringContaining('You already approved this') });
    expect((await decider.record(click(step, 'U0REQUESTER', { kind: 'approve', version: 0 }))).recorded).toBe(false);

    const second = await decider.record(click(step, 'U0BOB', { kind: 'approve', version: 0 }));
    expect(second).toMatchObject({ recorded: true, completedStep: true });
    if (second.recorded) await decider.publish(second);
    expect(submitted).toEqual([{ kind: 'resume', stepId: step.stepId, channel: step.channel, threadTs: step.threadTs }]);
    const decisions = (await audit.read({ sinceMs: 0 })).filter((event) => event.type === 'decision');
    expect(decisions.map((event) => (event.type === 'decision' ? event.quorum : undefined))).toEqual([
      { have: 1, need: 2 },
      { have: 2, need: 2 },
    ]);
  });

  it('keeps an edit that needs other approvers as a new version, without counting the editor, and tells them', async () => {
    const { store: states, decider, submitted, audit } = setup();
    const step = await storeStep(states, stepFor('scale'));
    // The edited input falls under the restart rule here (two approvers, Alice and the on-call group).
    const edit = { kind: 'edit' as const, fromVersion: 0, input: { tool: 'restart_service' }, submittedInput: { tool: 'restart_service' } };
    const escalated = await decider.record(click(step, 'U0ALICE', edit));
    expect(escalated).toMatchObject({ recorded: true, completedStep: false, effect: { kind: 'new-version', counted: true, have: 1, need: 2 } });
    expect(escalated.recorded && escalated.notice).toContain('version 2');
    expect(submitted).toEqual([]);
    expect((await audit.read({ sinceMs: 0 })).map((event) => event.type)).toEqual(['input-edited', 'decision']);
    // Approving the old card is refused as stale; the on-call member completes version 2.
    expect(await decider.record(click(step, 'U0BOB', { kind: 'approve', version: 0 }))).toMatchObject({ recorded: false, message: expect.stringContaining('changed since you looked') });
    const done = await decider.record(click(step, 'U0BOB', { kind: 'approve', version: 1 }));
    expect(done).toMatchObject({ recorded: true, completedStep: true });
    expect((await states.getStep(step.stepId))?.decisions.apv1).toMatchObject({ outcome: 'approved', version: 1, approvedBy: ['U0ALICE', 'U0BOB'] });
  });
});

describe('showing decisions that race on one card', () => {
  it('leaves the card showing the final state, however many decisions land while one process is updating it', async () => {
    const audit = createMemoryAuditLog({ logger });
    const states = createMemoryStore({ audit });
    const step = await storeStep(states, makeStep(['apv1', 'apv2', 'apv3', 'apv4'], { cardTs: '2.2' }));
    await states.setStepCard(step.stepId, '2.2');
    // While each of the first process's card updates is on its way, another process decides the next
    // call; the one that completes the step shows it at once, before the slow update lands.
    const approveElsewhere = async (approvalId: string, show = false) => {
      const outcome = await decider.record({ ...click(step, `U0${approvalId.toUpperCase()}`, { kind: 'approve', version: 0 }), approvalId });
      if (show && outcome.recorded) await decider.publish(outcome);
    };
    const duringNextUpdate = [() => approveElsewhere('apv2'), () => approveElsewhere('apv3'), () => approveElsewhere('apv4', true)];
    /** Approve buttons on the card after each update, in the order the updates landed. */
    const buttonsShown: number[] = [];
    const messenger = {
      updateStepCard: async ({ step: shown }: { step: PendingStep }) => {
        await duringNextUpdate.shift()?.();
        buttonsShown.push(shown.calls.filter((call) => shown.decisions[call.approvalId] === undefined).length);
      },
    } as unknown as ThreadMessenger;
    const worker = { submit: async () => {}, pickUp: async () => false, startPickUp: async () => false, room: () => 0, idle: async () => {}, queueing: { mode: 'hand-off' as const, lockTtlMs: 60_000 }, claimTaken: <T>(_threadKey: string, claim: T) => claim, drainClaimed: async () => {} };
    const decider = createCallDecider({ store: states, messenger, worker, logger, audit, resolveGroups: async () => new Map(), evaluateInput: async ({ call }) => call.policy! });

    const first = await decider.record({ ...click(step, 'U0FIRST', { kind: 'approve', version: 0 }), approvalId: 'apv1' });
    if (!first.recorded) throw new Error('the first decision was not recorded');
    await decider.publish(first);
    expect(buttonsShown.at(-1)).toBe(0);
  });
});

describe('showing a decision on a step with copies but no thread card on record', () => {
  // Its first card's post answered with its outcome not known (looked for by the sweep): the copies
  // were posted all the same, and the one clicked would keep live buttons after the call ran.
  it('draws the copies, the clicked one among them', async () => {
    const { store: states } = setup();
    const step = await storeStep(states, stepFor('scale'));
    await states.recordCardCopy(step.stepId, { kind: 'channel', channel: 'C0APPROVALS', ts: 'copy-1' });
    const drawn: string[] = [];
    const messenger = {
      updateStepCard: async () => void drawn.push('card'),
      updateStepCopy: async ({ step: shown, copy }: { step: PendingStep; copy: { ts: string } }) => void drawn.push(`${copy.ts}: ${shown.decisions.apv1?.outcome ?? 'waiting'}`),
    } as unknown as ThreadMessenger;
    const { decider } = createTestDecider({ store: states, messenger });
    const outcome = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }));
    if (!outcome.recorded) throw new Error('the decision was not recorded');
    await decider.publish(outcome);
    expect(drawn).toEqual(['copy-1: approved']);
  });
});

describe('a click while the store is unavailable', () => {
  const unavailable = () => new Error('Connection is closed.');
  /** The store, with `getStep`, `commitStep` and `commitStepAndQueue` failing as `plan` says, call by call (the writes count together). */
  function flakyStore(store: StateStore, plan: { reads?: Array<'fail' | 'ok'>; writes?: Array<'fail' | 'write then fail' | 'ok'> }) {
    const calls = { reads: 0, writes: 0 };
    const flaky = async <T>(write: () => Promise<T>): Promise<T> => {
      const next = plan.writes?.[calls.writes++] ?? 'ok';
      if (next === 'fail') throw unavailable();
      const committed = await write();
      // The write landed; its reply was lost with the connection.
      if (next === 'write then fail') throw unavailable();
      return committed;
    };
    const wrapped: StateStore = {
      ...store,
      getStep: async (stepId) => {
        const next = plan.reads?.[calls.reads++] ?? 'ok';
        if (next === 'fail') throw unavailable();
        return store.getStep(stepId);
      },
      commitStep: (transition, options) => flaky(() => store.commitStep(transition, options)),
      commitStepAndQueue: (transition, queueing) => flaky(() => store.commitStepAndQueue(transition, queueing)),
    };
    return { wrapped, calls };
  }

  it('waits it out and records the decision once the store answers again', async () => {
    let calls = { reads: 0, writes: 0 };
    const { store: states, decider, submitted } = setup({
      wrapStore: (store) => {
        const flaky = flakyStore(store, { reads: ['fail', 'fail'], writes: ['fail'] });
        calls = flaky.calls;
        return flaky.wrapped;
      },
    });
    const step = await storeStep(states, stepFor('scale'));
    const outcome = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }), { storeWaitMs: 5_000 });
    expect(outcome).toMatchObject({ recorded: true, completedStep: true });
    if (outcome.recorded) await decider.publish(outcome);
    expect(submitted).toEqual([{ kind: 'resume', stepId: step.stepId, channel: step.channel, threadTs: step.threadTs }]);
    // The write that failed and the one that landed.
    expect(calls.writes).toBe(2);
  });

  it('without a wait (a form, due within 3 s) answers "could not record" at once', async () => {
    const { store: states, decider } = setup({ wrapStore: (store) => flakyStore(store, { reads: ['fail'] }).wrapped });
    const step = await storeStep(states, stepFor('scale'));
    const outcome = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }));
    expect(outcome).toEqual({ recorded: false, message: expect.stringContaining('could not record your decision') });
    expect((await states.getStep(step.stepId))?.decisions).toEqual({});
  });

  it('sends a write that landed before its reply was lost again as the same write: recorded once, and this process drains the lock it took', async () => {
    const { store: states, decider, audit, submitted } = setup({ wrapStore: (store) => flakyStore(store, { writes: ['write then fail', 'fail'] }).wrapped });
    const step = await storeStep(states, stepFor('scale'));
    const outcome = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }), { storeWaitMs: 5_000 });
    // The clicker hears what is true: their approval is in (not "Already approved by you", nor "could not record").
    expect(outcome).toMatchObject({ recorded: true, completedStep: true, claim: { token: expect.any(String) } });
    if (outcome.recorded) await decider.publish(outcome);
    // The claim the first write took, drained here rather than left until the lock lapses.
    expect(submitted).toEqual([{ kind: 'resume', stepId: step.stepId, channel: step.channel, threadTs: step.threadTs }]);
    expect((await audit.read({ sinceMs: 0 })).filter((event) => event.type === 'decision')).toHaveLength(1);
  });

  it('does the same for a decision that does not complete the step (one approval of two)', async () => {
    const { store: states, decider, audit } = setup({ wrapStore: (store) => flakyStore(store, { writes: ['write then fail'] }).wrapped });
    const step = await storeStep(states, stepFor('restart_service'));
    const outcome = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }), { storeWaitMs: 5_000 });
    expect(outcome).toMatchObject({ recorded: true, completedStep: false });
    expect((await states.getStep(step.stepId))?.revision).toBe(step.revision + 1);
    expect((await audit.read({ sinceMs: 0 })).filter((event) => event.type === 'decision')).toHaveLength(1);
  });

  it('gives up on a write that may have landed: says whether it was recorded is not known (not "nothing changed"), and has the card drawn again', async () => {
    const redrawn: string[] = [];
    const { store: states, decider } = setup({
      wrapStore: (store) => flakyStore(store, { writes: ['write then fail'] }).wrapped,
      cardRefreshes: { redraw: async ({ stepId }) => void redrawn.push(stepId) },
    });
    const step = await storeStep(states, stepFor('restart_service'));
    // No wait (a form): the write is not sent again, so Redis never says what became of it.
    const outcome = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }));
    expect(outcome).toMatchObject({ recorded: false, unsettled: { stepId: step.stepId } });
    expect(outcome.recorded === false && outcome.message).toContain('could not confirm whether your approval was recorded');
    expect(outcome.recorded === false && outcome.message).not.toContain('nothing changed');
    // It did land: the card, drawn again, shows it.
    expect((await states.getStep(step.stepId))?.revision).toBe(step.revision + 1);
    await decider.publish(outcome);
    expect(redrawn).toEqual([step.stepId]);
  });

  it('says "nothing changed" for a write Redis refused unrun (an error reply: a replica, still loading, out of memory)', async () => {
    const { store: states, decider } = setup({
      wrapStore: (store) => ({
        ...store,
        commitStep: async () => {
          throw new ReplyError("READONLY You can't write against a read only replica.");
        },
      }),
    });
    const step = await storeStep(states, stepFor('restart_service'));
    const outcome = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }));
    expect(outcome).toEqual({ recorded: false, message: expect.stringContaining('could not record your decision, so nothing changed') });
  });

  it('does not retry what is not an outage', async () => {
    let reads = 0;
    const { store: states, decider } = setup({
      wrapStore: (store) => ({
        ...store,
        getStep: async () => {
          reads += 1;
          throw new Error('WRONGTYPE Operation against a key holding the wrong kind of value');
        },
      }),
    });
    const step = await storeStep(states, stepFor('scale'));
    const outcome = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }), { storeWaitMs: 5_000 });
    expect(outcome).toEqual({ recorded: false, message: expect.stringContaining('could not record your decision') });
    expect(reads).toBe(1);
  });
});

describe('a Deny the Redis replicas did not confirm in time', () => {
  // The store reports a withdrawal written on the primary but not confirmed by a replica (see `ReplicaShortfall`).
  const unconfirmed = { wanted: 1, confirmed: 0 };
  const confirmingNothing = (store: StateStore): StateStore => ({
    ...store,
    commitStep: async (transition) => ({ ...(await store.commitStep(transition)), ...(transition.withdraws ? { unconfirmed } : {}) }),
    commitStepAndQueue: async (transition, queueing) => ({ ...(await store.commitStepAndQueue(transition, queueing)), ...(transition.withdraws ? { unconfirmed } : {}) }),
  });

  it('is recorded, and the person is told it is not yet confirmed rather than done', async () => {
    const { store: states, decider } = setup({ wrapStore: confirmingNothing });
    const step = await storeStep(states, stepFor('scale'));
    const outcome = await decider.record(click(step, 'U0ALICE', { kind: 'deny' }));
    expect(outcome).toMatchObject({ recorded: true, completedStep: true, notice: expect.stringMatching(/^:x: Denied\. :warning: Redis has not confirmed it on its replica yet \(0 confirmed within the wait\).*decide it again\.$/) });
    expect((await states.getStep(step.stepId))?.decisions.apv1).toMatchObject({ outcome: 'denied', userId: 'U0ALICE' });
  });

  it('says nothing of replicas for an approval, which is not waited for', async () => {
    const { store: states, decider } = setup({ wrapStore: confirmingNothing });
    const step = await storeStep(states, stepFor('scale'));
    const outcome = await decider.record(click(step, 'U0ALICE', { kind: 'approve', version: 0 }));
    expect(outcome).toMatchObject({ recorded: true, completedStep: true });
    expect(outcome).not.toHaveProperty('notice');
  });
});
