import { afterEach, describe, expect, inject, it } from 'vitest';
import { installFaultHook } from '../../src/runtime/fault-points.js';
import type { StateStore } from '../../src/store/state-store.js';
import { createRedisStore } from '../../src/store/redis-store.js';
import { threadKeyOf } from '../../src/store/thread-state.js';
import { blockActionsPayload, postSlackInteraction } from '../helpers/signed-request.js';
import { CHANNEL, SIGNING_SECRET, TEAM_ID, cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();

const SRE_ONLY = `
policy:
  rules:
    - name: sre
      tools: [restart_service]
      approvers: [group:S0SRE]
`;

const restartWorker = { name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } };

/** Alice asks for a restart; `user` approves it on its card. The model answers `afterResume` once the turn resumes. */
async function approveVia(h: Harness, user: string, afterResume: string) {
  h.openai.enqueue({ toolCalls: [restartWorker] }, { text: afterResume });
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
  const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
  const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
  await postSlackInteraction({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, payload: blockActionsPayload({ user, channel: CHANNEL, messageTs: card.ts, threadTs, ...approve, teamId: TEAM_ID }) });
  return threadTs;
}

/** Carol's approval runs once (so the group reads Bob in it), then Bob leaves @sre. */
async function bobLeftSre(h: Harness) {
  h.slack.setUsergroupUsers('S0SRE', ['UBOB', 'UCAROL']);
  const first = await approveVia(h, 'UCAROL', 'Restarted once.');
  await waitFor(() => threadReplies(h, first).some((message) => message.text === 'Restarted once.'), { message: 'first answer' });
  h.slack.setUsergroupUsers('S0SRE', ['UCAROL']);
}

afterEach(() => installFaultHook(undefined));

/**
 * The resume's claim turns an approval that no longer holds into a denial, in one write with the
 * thread that tells the model so. The audit record saying why (`approval-revoked`) is written in
 * that same write: a process that stops right after the claim leaves a trail that says why the
 * approved call never ran, not only Bob's "approved".
 */
describe('an approval revoked at resume is audited in the claim that revokes it', () => {
  it('records approval-revoked when nothing stops', async () => {
    const h = await harness({ extraYaml: SRE_ONLY, sweepIntervalMs: 100 });
    await bobLeftSre(h);
    const second = await approveVia(h, 'UBOB', 'Did not restart.');
    await waitFor(() => threadReplies(h, second).some((message) => message.text === 'Did not restart.'), { timeoutMs: 10_000, message: 'answer' });
    await h.settled();
    expect((await h.auditEvents()).filter((event) => event.type === 'action-refused')).toEqual([expect.objectContaining({ userId: 'UBOB', code: 'approval-revoked', action: 'resume' })]);
    expect(h.invocations()).toHaveLength(1);
  }, 30_000);

  it('keeps the approval-revoked record when the process stops right after the claim', async () => {
    const h = await harness({ extraYaml: SRE_ONLY, sweepIntervalMs: 100 });
    await bobLeftSre(h);
    // Bob's click reads the cached group (allowed); the resume reads it fresh and revokes the approval.
    let stopped = false;
    installFaultHook((name) => {
      if (name === 'after-claim' && !stopped) {
        stopped = true;
        throw new Error('the process stopped here');
      }
    });
    const second = await approveVia(h, 'UBOB', 'Did not restart.');
    await waitFor(() => stopped, { message: 'the fault point' });
    await h.settled();
    expect(threadReplies(h, second).map((message) => message.text)).toContainEqual(expect.stringContaining('Something went wrong'));
    // What the claim committed: the step is resumed and Bob's approval is now a denial that says why.
    const events = await h.auditEvents();
    const bobsDecision = events.find((event) => event.type === 'decision' && event.userId === 'UBOB');
    expect(bobsDecision).toMatchObject({ outcome: 'approved' });
    const store = createRedisStore({ url: inject('redisUrl'), keyPrefix: h.keyPrefix });
    try {
      const step = await store.getStep((bobsDecision as { stepId: string }).stepId);
      expect(step?.phase).toBe('resumed');
      expect(Object.values(step?.decisions ?? {})).toContainEqual(expect.objectContaining({ outcome: 'denied', userId: 'countersign', reason: expect.stringContaining('the approval by <@UBOB> no longer holds') }));
    } finally {
      await store.close();
    }
    expect(h.invocations()).toHaveLength(1);
    // The trail says why the call Bob approved never ran.
    expect(events.filter((event) => event.type === 'action-refused')).toEqual([expect.objectContaining({ userId: 'UBOB', code: 'approval-revoked', action: 'resume' })]);
  }, 30_000);
});

/**
 * The store with Redis out for the first executing marker (the approved call never starts, so the
 * turn fails with it still to run), and a process that stops right after the Try again save that
 * withdraws the approval once `armed`.
 */
function failingThenStopping(store: StateStore) {
  const state = { markerFailed: false, armed: false, stopped: false };
  const wrapped: StateStore = {
    ...store,
    markExecuting: async (options) => {
      if (!state.markerFailed) {
        state.markerFailed = true;
        throw new Error('Connection is closed.');
      }
      return store.markExecuting(options);
    },
    saveThread: async (thread, ttlMs, fence, options) => {
      await store.saveThread(thread, ttlMs, fence, options);
      // Try again's save is the one that takes the failure off the thread.
      if (state.armed && !state.stopped && thread.failedTurn === undefined) {
        state.stopped = true;
        throw new Error('the process stopped here');
      }
    },
  };
  return { wrapped, state };
}

describe('an approval withdrawn at Try again is audited in the save that withdraws it', () => {
  it('keeps the approval-revoked record when the process stops right after that save', async () => {
    let control: ReturnType<typeof failingThenStopping>['state'] | undefined;
    const h = await harness({
      extraYaml: SRE_ONLY,
      wrapStore: (store) => {
        const { wrapped, state } = failingThenStopping(store);
        control = state;
        return wrapped;
      },
    });
    h.slack.setUsergroupUsers('S0SRE', ['UBOB']);
    h.openai.enqueue({ toolCalls: [restartWorker] }, { error: { status: 400, message: 'model exploded' } }, { text: 'Bob can no longer approve that.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('could not finish')), { timeoutMs: 10_000, message: 'failure notice' });
    await h.settled();
    expect(h.invocations()).toEqual([]);

    h.slack.setUsergroupUsers('S0SRE', []);
    control!.armed = true;
    const retry = cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry')!;
    await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...retry });
    await waitFor(() => control!.stopped, { timeoutMs: 10_000, message: 'the save that withdraws the approval' });
    await h.settled();

    // What the save committed: the history tells the model Bob's approval no longer holds.
    const store = createRedisStore({ url: inject('redisUrl'), keyPrefix: h.keyPrefix });
    try {
      const thread = await store.getThread(threadKeyOf({ teamId: TEAM_ID, channel: CHANNEL, threadTs }));
      expect(JSON.stringify(thread?.messages)).toContain('no longer holds');
    } finally {
      await store.close();
    }
    expect(h.invocations()).toEqual([]);
    // The trail says why the call Bob approved never ran.
    const refusals = (await h.auditEvents()).filter((event) => event.type === 'action-refused');
    expect(refusals).toEqual([expect.objectContaining({ userId: 'UBOB', code: 'approval-revoked', action: 'retry' })]);
  }, 30_000);
});
