import { describe, expect, it } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import type { StateStore } from '../../src/store/state-store.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';
import { deferred } from '../helpers/deferred.js';
import { stallable } from '../helpers/stalling-store.js';

/**
 * A step's own resume claims it (`claimAndResume`, one atomic write) and its process stalls right
 * after that write, past its lock; a replica (same Redis) takes the resume item over and finishes
 * it with `recoverInterruptedResume`. The thread must end as it would have without the stall.
 */
const harness = useHarnesses();

/** The first bot stalls right after its first committed resume claim (every later store call waits). */
function stallAfterClaim() {
  const control = { stalling: false, stalled: deferred(), released: deferred() };
  let built = 0;
  const wrapStore = (store: StateStore): StateStore => {
    built += 1;
    if (built > 1) return store;
    const stall = async () => {
      if (control.stalling) await control.released.promise;
    };
    return stallable(stall, {
      ...store,
      async commitStepWithThread(options) {
        await stall();
        const result = await store.commitStepWithThread(options);
        if (result === 'committed' && !control.stalling && !process.env.NO_STALL) {
          control.stalling = true;
          control.stalled.resolve();
          await control.released.promise;
        } else if (result === 'committed') control.stalled.resolve();
        return result;
      },
    });
  };
  return { control, wrapStore };
}

async function replicaFinishes(h: Harness, control: ReturnType<typeof stallAfterClaim>['control']) {
  await control.stalled.promise;
  // Started only now, so the step's resume item is the stalled bot's.
  const replica = await h.startReplica();
  await waitFor(async () => (await replica.bot.store.busyThreads({ limit: 10 })).length === 0, { timeoutMs: 20_000, message: 'the replica to finish the item' });
  control.released.resolve();
  await h.settled();
  return replica;
}

describe('a resume that expiry stopped (onExpiry: stop), its process stalling right after the claim', () => {
  it('the thread gets the expiry notice and the model is not asked', async () => {
    let offset = 0;
    const now = () => Date.now() + offset;
    const { control, wrapStore } = stallAfterClaim();
    const h = await harness({
      extraYaml: `
policy:
  rules:
    - name: restarts
      tools: [restart_service]
      approvers: [U0OPS1]
      expiry: 1h
      onExpiry: stop
`,
      now,
      sweepIntervalMs: 100,
      environment: { COUNTERSIGN_LOCK_TTL_MS: '1000' },
      wrapStore,
    });
    try {
      h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: 'MODEL ANSWER after the expiry' });
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
      await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the card' });
      await h.settled();
      offset += 2 * 60 * 60 * 1000;
      await replicaFinishes(h, control);
      const texts = threadReplies(h, threadTs).map((message) => message.text);
      expect({
        modelRequests: h.openai.requests.length,
        notices: texts.filter((text) => text.includes('expired without a decision, so nothing was run')).length,
        modelAnswer: texts.includes('MODEL ANSWER after the expiry'),
        invocations: h.invocations(),
      }).toEqual({ modelRequests: 1, notices: 1, modelAnswer: false, invocations: [] });
    } finally {
      control.released.resolve();
    }
  }, 60_000);
});

describe('a resume whose claim revoked an approval (the approver left the group), its process stalling right after the claim', () => {
  it('the card says the call was not run, as it does without the stall', async () => {
    const { control, wrapStore } = stallAfterClaim();
    let armed = false;
    const h = await harness({
      extraYaml: `
policy:
  rules:
    - name: sre
      tools: [restart_service]
      approvers: [group:S0SRE]
`,
      sweepIntervalMs: 100,
      environment: { COUNTERSIGN_LOCK_TTL_MS: '1000' },
      wrapStore: (store) => {
        const wrapped = wrapStore(store);
        // Only the second thread's claim stalls.
        return new Proxy(wrapped, {
          get(target, property, receiver) {
            if (property === 'commitStepWithThread' && !armed) return store.commitStepWithThread.bind(store);
            return Reflect.get(target, property, receiver);
          },
        });
      },
    });
    try {
      h.slack.setUsergroupUsers('S0SRE', ['UBOB', 'UCAROL']);
      // A first request Carol approves, so the group (with Bob in it) is read and cached.
      h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'cache', namespace: 'prod' } }] }, { text: 'Restarted once.' });
      const first = nextTs();
      await h.mention({ user: 'UALICE', text: 'restart cache', ts: first });
      const firstCard = await waitFor(() => threadReplies(h, first).find((message) => cardButtons(message.blocks).length > 0), { message: 'first card' });
      await h.click({ user: 'UCAROL', cardTs: firstCard.ts, threadTs: first, ...cardButtons(firstCard.blocks).find((button) => button.actionId === 'countersign_approve')! });
      await waitFor(() => threadReplies(h, first).some((message) => message.text === 'Restarted once.'), { message: 'first answer' });
      await h.settled();
      h.slack.setUsergroupUsers('S0SRE', ['UCAROL']);

      h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: 'The worker restart was not run.' });
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
      const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
      await h.settled();
      armed = true;
      // Bob's click reads the cached group (allowed); the resume reads it fresh and revokes the approval.
      await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')! });
      await replicaFinishes(h, control);
      const cardNow = JSON.stringify(h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)?.blocks);
      const audit = await h.auditEvents();
      expect({
        answers: threadReplies(h, threadTs).filter((message) => message.text === 'The worker restart was not run.').length,
        invocations: h.invocations().length,
        revocations: audit.filter((event) => event.type === 'action-refused' && event.code === 'approval-revoked').length,
        cardSaysNotRun: cardNow.includes('Not run'),
        cardSaysApproved: cardNow.includes('Approved by <@UBOB>'),
      }).toEqual({ answers: 1, invocations: 1, revocations: 1, cardSaysNotRun: true, cardSaysApproved: false });
    } finally {
      control.released.resolve();
    }
  }, 60_000);
});

// A regression check (passes): no NO_STALL control, since without the stall both calls run.
describe('a resume of two approved calls, its process stalling once the first call is marked started (before the second starts)', () => {
  it('the first is reported interrupted and never run; the second, which never started, still runs once', async () => {
    const control = { stalling: false, stalled: deferred(), released: deferred() };
    let built = 0;
    let marked = false;
    const wrapStore = (store: StateStore): StateStore => {
      built += 1;
      if (built > 1) return store;
      const stall = async () => {
        if (control.stalling) await control.released.promise;
      };
      return stallable(stall, {
        ...store,
        async markExecuting(options) {
          await stall();
          // Only the first call's marker is written; any other waits for the (stalled) process.
          const first = !marked;
          marked = true;
          if (!first) await control.released.promise;
          const result = await store.markExecuting(options);
          if (first) {
            // The first call's marker is written: the process stalls now, before that call or the next starts.
            control.stalling = true;
            control.stalled.resolve();
            await control.released.promise;
          } else control.stalled.resolve();
          return result;
        },
      });
    };
    const h = await harness({ sweepIntervalMs: 100, environment: { COUNTERSIGN_LOCK_TTL_MS: '1000' }, wrapStore });
    try {
      h.openai.enqueue(
        {
          toolCalls: [
            { name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } },
            { name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } },
          ],
        },
        { text: 'Done with both restarts.' },
      );
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'restart the worker and the api', ts: threadTs });
      const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the card' });
      await h.settled();
      for (const index of [0, 1]) {
        const approve = cardButtons((card.blocks as any[]).filter((block) => String(block.block_id).startsWith(`countersign_call_${index}_`))).find((button) => button.actionId === 'countersign_approve')!;
        await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
      }
      await replicaFinishes(h, control);
      const told = JSON.stringify(h.openai.requests.slice(1).map((request) => conversationOf(request).filter((message) => message.role === 'tool')));
      expect({
        invocations: h.invocations().length,
        answers: threadReplies(h, threadTs).filter((message) => message.text === 'Done with both restarts.').length,
        toldNotRun: told.includes('Not run: the turn was interrupted before this call started'),
      }).toEqual({ invocations: 1, answers: 1, toldNotRun: false });
    } finally {
      control.released.resolve();
    }
  }, 60_000);
});

describe('an interrupted resume whose recovery is itself interrupted right after it recorded the calls the first process started', () => {
  it('the third process still finishes the turn: the thread gets its answer', async () => {
    const first = { stalling: false, stalled: deferred(), released: deferred() };
    const second = { stalling: false, stalled: deferred(), released: deferred() };
    let built = 0;
    let marks = 0;
    const wrapStore = (store: StateStore): StateStore => {
      built += 1;
      if (built === 1) {
        const stall = async () => {
          if (first.stalling) await first.released.promise;
        };
        return stallable(stall, {
          ...store,
          async markExecuting(options) {
            await stall();
            const result = await store.markExecuting(options);
            marks += 1;
            // The approved restart ran; the turn's next call (get_pods) is marked started: the process stalls.
            if (marks === 2) {
              first.stalling = true;
              first.stalled.resolve();
              await first.released.promise;
            }
            return result;
          },
        });
      }
      if (built === 2) {
        const stall = async () => {
          if (second.stalling) await second.released.promise;
        };
        return stallable(stall, {
          ...store,
          async saveThread(...args) {
            await stall();
            const result = await store.saveThread(...args);
            // The recovery's first save (`closeInterruptedCalls`): the second process stalls too.
            if (!second.stalling && !process.env.NO_STALL) {
              second.stalling = true;
              second.stalled.resolve();
              await second.released.promise;
            } else second.stalled.resolve();
            return result;
          },
        });
      }
      return store;
    };
    const h = await harness({ sweepIntervalMs: 100, environment: { COUNTERSIGN_LOCK_TTL_MS: '1000' }, wrapStore });
    try {
      h.openai.enqueue(
        { toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] },
        { toolCalls: [{ name: 'get_pods', arguments: { namespace: 'prod' } }] },
        { text: 'The worker was restarted; I could not list the pods.' },
      );
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'restart the worker, then list the pods', ts: threadTs });
      const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the card' });
      await h.settled();
      await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')! });
      await first.stalled.promise;
      await h.startReplica();
      await second.stalled.promise;
      const third = await h.startReplica();
      await waitFor(async () => (await third.bot.store.busyThreads({ limit: 10 })).length === 0, { timeoutMs: 20_000, message: 'the third process to finish the item' });
      const modelRequestsBeforeRelease = h.openai.requests.length;
      first.released.resolve();
      second.released.resolve();
      await h.settled();
      expect({
        invocations: h.invocations(),
        answered: threadReplies(h, threadTs).some((message) => message.text === 'The worker was restarted; I could not list the pods.'),
        // The first process asked twice (the mention, the resume); the turn's end needs one more.
        modelRequestsBeforeRelease,
      }).toEqual({ invocations: [['rollout', 'restart', 'deployment/worker', '-n', 'prod']], answered: true, modelRequestsBeforeRelease: 3 });
    } finally {
      first.released.resolve();
      second.released.resolve();
    }
  }, 60_000);
});
