import { describe, expect, it } from 'vitest';
import { approveRestartBehind, TWO_APPROVALS_YAML, useHarnessesBehindLosingProxies } from './lost-decision-reply.test-support.js';

/**
 * Review (7c80c51 left this): the first of two approvals (quorum 2) is a decision write that does not
 * complete the step (COMMIT_STEP_SCRIPT, no attempt key). Its reply is lost; ioredis sends it again;
 * the resend finds the step at the next revision and answers 'conflict'; the decider reads the step
 * afresh and refuses Bob's click as a second approval of his own, though it was recorded.
 */
const { harness, losingProxy } = useHarnessesBehindLosingProxies();

describe('the first approval of two whose decision write ran but whose reply was lost', () => {
  it("is recorded as Bob's and he is not told it was refused", async () => {
    // Only Bob's decision write names him (the step's approvals, the audit pair).
    const proxy = await losingProxy('UBOB');
    const h = await harness({ redisUrl: proxy.url, extraYaml: TWO_APPROVALS_YAML });
    await approveRestartBehind(h, proxy, 'Restarted **worker** in staging.');
    await h.settled();
    const told = h.slack.callsTo('chat.postEphemeral').map((call) => String((call as { text?: unknown }).text ?? JSON.stringify(call)));
    const updates = h.slack.callsTo('chat.update').filter((call) => JSON.stringify(call).includes('UBOB'));
    expect({ told, cardShowsBob: updates.length > 0 }, 'Bob is told his (recorded) approval was refused, and the card never shows it').toEqual({ told: [], cardShowsBob: true });
    expect(told, 'Bob is told his (recorded) approval was refused').toEqual([]);
  }, 45_000);
});
