import { describe, expect, it } from 'vitest';
import { CHANNEL, threadReplies, waitFor } from './harness.js';
import { approveRestartBehind, TWO_APPROVALS_YAML, useHarnessesBehindLosingProxies } from './lost-decision-reply.test-support.js';

/**
 * A click's decision write runs in Redis, then the connection is cut before its reply and Redis
 * stays unreachable for longer than ioredis's reconnects last (`maxRetriesPerRequest` 2 at 50 and
 * 100 ms): ioredis rejects the write ("max retries per request") instead of sending it again, and
 * the decider waits out the outage (a click's store wait, 5 s). The write it then sends is the same
 * write, under the same attempt key, not a decision judged afresh against a step that already
 * holds it (decision-reply-lost.test.ts is the resend ioredis makes itself).
 */
const { harness, losingProxy } = useHarnessesBehindLosingProxies();

/** Far longer than the test waits for the answer: a resume that needs the lock to lapse cannot pass. */
const LOCK_TTL_MS = 60_000;
/** Longer than ioredis's reconnects for one command, shorter than a click's store wait. */
const OUTAGE_MS = 1_500;

describe('a decision whose write ran but whose command then failed while Redis was unreachable', () => {
  it("is recorded as the approver's, and the resumed turn's answer comes at once (not after the thread lock lapses)", async () => {
    // Only the resume item the completing decision queues names "kind":"resume".
    const proxy = await losingProxy('"kind":"resume"', { refuseForMs: OUTAGE_MS });
    const h = await harness({ redisUrl: proxy.url, environment: { COUNTERSIGN_LOCK_TTL_MS: String(LOCK_TTL_MS) } });
    const { threadTs, clickedAt } = await approveRestartBehind(h, proxy, 'Restarted the worker in staging.');
    // The outage and the decider's wait take seconds; the lock would take a minute to lapse.
    const answer = await waitFor(() => threadReplies(h, threadTs).find((message) => String(message.text ?? '').includes('Restarted the worker')), {
      timeoutMs: LOCK_TTL_MS / 3,
      message: "the resumed turn's answer (it waits for the orphaned thread lock to lapse)",
    });
    expect(proxy.back()).toBe(true);
    expect(Date.now() - clickedAt).toBeLessThan(LOCK_TTL_MS / 4);
    expect(answer).toBeDefined();
    // The write failed outright (ioredis gave up on it), not resent by ioredis on its own.
    expect(h.warnings().some((line) => line.includes('"decision-store-unavailable"'))).toBe(true);
    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'staging']]);
    await h.settled();
    // The resend is the click's own write: Bob is not told his approval was already someone's.
    const told = h.slack.callsTo('chat.postEphemeral').map((call) => String((call as { text?: unknown }).text ?? JSON.stringify(call)));
    expect(told, 'Bob is told his (recorded) approval was refused').toEqual([]);
    const decisions = (await h.auditEvents()).filter((event) => event.type === 'decision');
    expect(decisions).toHaveLength(1);
    expect(decisions[0]).toMatchObject({ outcome: 'approved', userId: 'UBOB' });
  }, 60_000);

  it('that does not complete the step (the first approval of two) is recorded once, and its approver is not told it was refused', async () => {
    // Only Bob's decision write names him (the step's approvals, the audit pair).
    const proxy = await losingProxy('UBOB', { refuseForMs: OUTAGE_MS });
    const h = await harness({ redisUrl: proxy.url, extraYaml: TWO_APPROVALS_YAML });
    await approveRestartBehind(h, proxy, 'Restarted the worker in staging.');
    await waitFor(() => proxy.back(), { message: 'Redis to be reachable again' });
    await h.settled();
    expect(h.warnings().some((line) => line.includes('"decision-store-unavailable"'))).toBe(true);
    const told = h.slack.callsTo('chat.postEphemeral').map((call) => String((call as { text?: unknown }).text ?? JSON.stringify(call)));
    const updates = h.slack.callsTo('chat.update').filter((call) => JSON.stringify(call).includes('UBOB'));
    expect({ told, cardShowsBob: updates.length > 0 }, 'Bob is told his (recorded) approval was refused, and the card never shows it').toEqual({ told: [], cardShowsBob: true });
    const decisions = (await h.auditEvents()).filter((event) => event.type === 'decision');
    expect(decisions).toHaveLength(1);
    expect(decisions[0]).toMatchObject({ outcome: 'approved', userId: 'UBOB' });
  }, 60_000);

  it('past the click\'s wait: its approver is told the outcome is not known (not "nothing changed"), and the card shows the approval once Redis answers', async () => {
    // Only Bob's decision write names him; Redis stays unreachable for longer than the click waits for it.
    const proxy = await losingProxy('UBOB', { refuseForMs: 2_500 });
    const h = await harness({ redisUrl: proxy.url, storeWaitMs: 1_000, extraYaml: TWO_APPROVALS_YAML });
    await approveRestartBehind(h, proxy, 'Restarted the worker in staging.');
    const ephemeral = await h.slack.waitForCall('chat.postEphemeral', undefined, { timeoutMs: 10_000 });
    // Told "could not confirm", so the click gave up waiting before the outage ended (a Redis back in time
    // would have answered the resent write). Not checked with proxy.back(): on a loaded machine the
    // answer can come after the 2.5 s outage, which says nothing about what the bot did.
    expect(ephemeral.args).toMatchObject({ channel: CHANNEL, user: 'UBOB' });
    expect(String(ephemeral.args.text), 'Bob is told nothing changed although his approval is recorded').not.toContain('nothing changed');
    expect(ephemeral.args.text).toContain('could not confirm whether your approval was recorded');
    // The decision did land: once Redis answers, the card shows it without anyone clicking again.
    await waitFor(() => proxy.back(), { message: 'Redis to be reachable again' });
    await waitFor(() => h.slack.callsTo('chat.update').some((call) => JSON.stringify(call).includes('UBOB')), { timeoutMs: 15_000, message: "the card to show Bob's approval" });
    const decisions = (await h.auditEvents()).filter((event) => event.type === 'decision');
    expect(decisions).toHaveLength(1);
    expect(decisions[0]).toMatchObject({ outcome: 'approved', userId: 'UBOB' });
    expect(h.slack.callsTo('chat.postEphemeral')).toHaveLength(1);
  }, 60_000);
});
