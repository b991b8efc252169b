import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { grantCovers } from '../approvals/grant.js';
import { evaluation, makeStep, TEAM, CHANNEL, REQUESTER } from '../approvals/pending-step.test-support.js';
import { applyCallAction } from '../approvals/transitions/call-action.js';
import { newStepId } from './redis-keys.js';
import { createRedisStore } from './redis-store.js';
import { newThreadState } from './thread-state.js';

/**
 * A model's tool input is JSON the bot parses with JSON.parse: `"\ud800"` (a lone UTF-16 surrogate)
 * is valid there, and JSON.stringify writes it back as that escape. Redis's cjson refuses it. The
 * grant an "Approve & allow" writes carries the approved call's input, so its stored JSON is one
 * that MARK_EXECUTING_SCRIPT and LIST_GRANTS_SCRIPT cannot decode:
 *  - while it is live, the gate (listGrants + grantCovers) lets every later call of the tool in the
 *    channel through on it, and the marker refuses each as "revoked or expired": the model is told
 *    to ask again, and the gate lets the next call through on the same grant, never showing a card;
 *  - once it has ended by Redis's clock, LIST_GRANTS_SCRIPT keeps it (it removes only what it can
 *    decode) and `/countersign grants` / App Home list it as active.
 */
describe('a grant whose approved input holds a lone surrogate', () => {
  it('lets the later calls the gate lets through on it start while it is live', async () => {
    const keyPrefix = `grant-lone-surrogate:${randomUUID()}:`;
    const storeNow = Date.now();
    const store = createRedisStore({ url: inject('redisUrl'), keyPrefix, serverClock: () => storeNow });
    try {
      const policy = evaluation({ rule: { index: 0, fingerprint: 'rule-fp-1' } as never, approvers: [{ kind: 'user', userId: 'UCAROL' }] as never });
      // The model's input for the approved call held "\ud800" (say, half an emoji): JSON-valid, cjson-invalid.
      const grantId = await grantOn(store, { input: { service: 'api\ud800', namespace: 'staging' }, policy, now: storeNow });

      // The gate's read: listed, and it covers a later call of the tool in the channel, with plain input.
      const listed = await store.listGrants({ teamId: TEAM, channel: CHANNEL, hideEndedBy: storeNow });
      const grant = listed.find((candidate) => candidate.grantId === grantId);
      expect(grant, 'the gate finds the grant').toBeDefined();
      const covers = grantCovers(grant!, {
        toolName: 'restart_service',
        channel: CHANNEL,
        threadTs: '1700000003.000100',
        input: { service: 'api', namespace: 'staging' },
        evaluation: policy,
        requesterId: REQUESTER,
        groupMembers: new Map(),
        inChannel: () => true,
        now: storeNow,
      });
      expect(covers, 'the gate lets the later call through on the grant').toBe(true);

      // The later call's start: the grant is live by Redis's clock, so its marker must be written.
      const laterThread = `${TEAM}:${CHANNEL}:1700000003.000100`;
      const fence = { threadKey: laterThread, token: (await store.tryLock(laterThread, 60_000))! };
      const marked = await store.markExecuting({
        fence,
        toolCallId: 'call_later',
        marker: { toolName: 'restart_service', input: { service: 'api', namespace: 'staging' }, startedAt: storeNow },
        ttlMs: 60_000,
        audit: [],
        grant: { teamId: TEAM, channel: CHANNEL, grantId },
      });
      expect(marked, 'a live grant the gate let the call through on refuses its start as revoked or expired').toBe('marked');
    } finally {
      await store.close();
    }
  });

  it('is no longer listed once it has ended by Redis\'s clock', async () => {
    const keyPrefix = `grant-lone-surrogate-ended:${randomUUID()}:`;
    let storeNow = Date.now();
    const store = createRedisStore({ url: inject('redisUrl'), keyPrefix, serverClock: () => storeNow });
    try {
      const policy = evaluation({ rule: { index: 0, fingerprint: 'rule-fp-1' } as never });
      // Another 24 h grant in the channel keeps the channel's grants hash alive (its key lives as long as its longest grant).
      const longer = await grantOn(store, { input: { service: 'web', namespace: 'staging' }, policy, now: storeNow, hours: 24, threadTs: '1700000001.000100' });
      const ended = await grantOn(store, { input: { service: 'api\ud800', namespace: 'staging' }, policy, now: storeNow });
      expect((await store.listGrants({ teamId: TEAM, channel: CHANNEL })).map((grant) => grant.grantId).sort()).toEqual([longer, ended].sort());
      // Two hours later by Redis's clock: the 1 h grant is over; the 24 h one (and so the hash) lives on.
      storeNow += 2 * 60 * 60 * 1000;
      const listed = (await store.listGrants({ teamId: TEAM, channel: CHANNEL })).map((grant) => grant.grantId);
      expect(listed, '/countersign grants lists a grant that ended an hour ago as active').toEqual([longer]);
      const home = (await store.listTeamGrants({ teamId: TEAM })).map((grant) => grant.grantId);
      expect(home, 'App Home lists a grant that ended an hour ago as active').toEqual([longer]);
    } finally {
      await store.close();
    }
  });

  it('covers exactly the input approved: the same lone surrogate, never U+FFFD in its place', async () => {
    const keyPrefix = `grant-lone-surrogate-identical:${randomUUID()}:`;
    const storeNow = Date.now();
    const store = createRedisStore({ url: inject('redisUrl'), keyPrefix, serverClock: () => storeNow });
    try {
      const policy = evaluation({ rule: { index: 0, fingerprint: 'rule-fp-1' } as never, approvers: [{ kind: 'user', userId: 'UCAROL' }] as never });
      // A lone surrogate, and beside it the six characters `\ud800` (an escaped backslash in the JSON): both read back as they were.
      const approved = { service: 'api\ud800', note: 'literal \\ud800' };
      const grantId = await grantOn(store, { input: approved, policy, identicalArgumentsOnly: true, now: storeNow });
      const grant = (await store.listGrants({ teamId: TEAM, channel: CHANNEL, hideEndedBy: storeNow })).find((candidate) => candidate.grantId === grantId);
      expect(grant?.input, 'the stored input is the approved one, not a cleaned copy').toEqual(approved);
      const covers = (input: unknown) =>
        grantCovers(grant!, { toolName: 'restart_service', channel: CHANNEL, threadTs: '1700000003.000100', input, evaluation: policy, requesterId: REQUESTER, groupMembers: new Map(), inChannel: () => true, now: storeNow });
      expect(covers({ service: 'api\ud800', note: 'literal \\ud800' }), 'the approved input').toBe(true);
      expect(covers({ service: 'api\ufffd', note: 'literal \\ud800' }), 'U+FFFD where the approved input had the lone surrogate').toBe(false);
      expect(covers({ service: 'api\ud800', note: 'literal \\ufffd' }), 'the literal text changed').toBe(false);
    } finally {
      await store.close();
    }
  });

  it('is never listed, and is dropped, when the store cannot read it at all (nested deeper than cjson reads)', async () => {
    const keyPrefix = `grant-unreadable:${randomUUID()}:`;
    const storeNow = Date.now();
    const store = createRedisStore({ url: inject('redisUrl'), keyPrefix, serverClock: () => storeNow });
    try {
      const policy = evaluation({ rule: { index: 0, fingerprint: 'rule-fp-1' } as never });
      let deep: unknown = 'leaf';
      for (let depth = 0; depth < 1_100; depth += 1) deep = { inner: deep };
      const unreadable = await grantOn(store, { input: { service: 'api', deep }, policy, now: storeNow });
      // Not live to the gate (the next call gets a card), as the start's own check finds it gone.
      expect((await store.listGrants({ teamId: TEAM, channel: CHANNEL })).map((grant) => grant.grantId)).not.toContain(unreadable);
      expect(await store.listTeamGrants({ teamId: TEAM })).toEqual([]);
      // Dropped, not kept hidden: nothing is left for a revoke to find.
      expect(await store.revokeGrant({ teamId: TEAM, channel: CHANNEL, grantId: unreadable, audit: () => { throw new Error('no audit: nothing to revoke'); } })).toBeUndefined();
      const laterThread = `${TEAM}:${CHANNEL}:1700000003.000100`;
      const fence = { threadKey: laterThread, token: (await store.tryLock(laterThread, 60_000))! };
      const marked = await store.markExecuting({
        fence,
        toolCallId: 'call_later',
        marker: { toolName: 'restart_service', input: { service: 'api' }, startedAt: storeNow },
        ttlMs: 60_000,
        audit: [],
        grant: { teamId: TEAM, channel: CHANNEL, grantId: unreadable },
      });
      expect(marked).toBe('grant-gone');
    } finally {
      await store.close();
    }
  });
});

/** Approves a call of `restart_service` in a new thread with "Approve & allow" for the channel (1 h unless told): the grant's id. */
async function grantOn(
  store: ReturnType<typeof createRedisStore>,
  {
    input,
    policy,
    now,
    hours = 1,
    identicalArgumentsOnly = false,
    threadTs = '1700000002.000100',
  }: { input: unknown; policy: ReturnType<typeof evaluation>; now: number; hours?: number; identicalArgumentsOnly?: boolean; threadTs?: string },
): Promise<string> {
  const threadKey = `${TEAM}:${CHANNEL}:${threadTs}`;
  const token = (await store.tryLock(threadKey, 60_000))!;
  const step = { ...makeStep([{ approvalId: 'apv-1', input, policy }], { threadTs }), threadKey, stepId: newStepId(threadKey) };
  await store.createStep({ step, thread: { ...newThreadState(step, 1), threadKey, pendingStepId: step.stepId }, ttlMs: 60_000, audit: [], fence: { threadKey, token } });
  const read = (await store.getStep(step.stepId))!;
  const result = applyCallAction(
    read,
    { stepId: step.stepId, approvalId: 'apv-1', userId: 'UCAROL', origin: { teamId: TEAM, channel: CHANNEL, membership: 'member' }, action: { kind: 'approve', version: 0, grant: { scope: 'channel', hours, identicalArgumentsOnly } } },
    { now, groupMembers: new Map(), newGrantId: () => randomUUID().slice(0, 16) },
  );
  if (!result.ok) throw new Error(result.refusal.message);
  expect((await store.commitStep(result.transition)).result).toBe('committed');
  return result.transition.grant!.grantId;
}
