import { describe, expect, it } from 'vitest';
import { waitFor } from './harness.js';
import { approveRestartBehind, useHarnessesBehindLosingProxies } from './lost-decision-reply.test-support.js';

/**
 * A click's decision write (the one that completes the step, queues its resume and, the thread
 * being free, takes its lock) runs in Redis but its reply is lost (a blip, a proxy reset, a
 * failover's cut connection). ioredis sends the script again on its new connection, as it does
 * for everything it never heard back about (delivery-claim-reply-lost.test.ts relies on that).
 */
const { harness, losingProxy } = useHarnessesBehindLosingProxies();

/** Shorter than the default 30 s, so a run that waits for the lock to lapse shows within seconds. */
const LOCK_TTL_MS = 8_000;

describe('an Approve whose decision write ran but whose reply was lost', () => {
  it("is recorded as the approver's and the approved call runs promptly (not after the thread lock lapses)", async () => {
    // Only the resume item the completing decision queues names "kind":"resume".
    const proxy = await losingProxy('"kind":"resume"');
    const h = await harness({ redisUrl: proxy.url, environment: { COUNTERSIGN_LOCK_TTL_MS: String(LOCK_TTL_MS) } });
    const { clickedAt } = await approveRestartBehind(h, proxy, 'Restarted **worker** in staging.');
    // A resume follows a click in well under a second; a reconnect takes a fraction of one.
    const ran = await waitFor(() => (h.invocations().length > 0 ? Date.now() - clickedAt : undefined), { timeoutMs: 3 * LOCK_TTL_MS, message: 'the approved call to run' });
    expect(ran, `the approved call ran ${ran} ms after the click: it waited for the orphaned thread lock to lapse`).toBeLessThan(LOCK_TTL_MS / 2);
    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'staging']]);
    await h.settled();
    // The resend is the click's own write: Bob is not told his approval was already someone's.
    expect(h.slack.callsTo('chat.postEphemeral')).toEqual([]);
  }, 45_000);
});
