import { afterEach, describe, expect, inject, it } from 'vitest';
import { startReplyLosingProxy, type ReplyLosingProxy } from '../helpers/reply-losing-proxy.js';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * Review (7c80c51 left this): the first of two approvals (quorum 2) is a decision write that does not
 * complete the step (COMMIT_STEP_SCRIPT, no attempt key). Its reply is lost; ioredis sends it again;
 * the resend finds the step at the next revision and answers 'conflict'; the decider reads the step
 * afresh and refuses Bob's click as a second approval of his own, though it was recorded.
 */
const proxies: ReplyLosingProxy[] = [];
afterEach(async () => {
  for (const proxy of proxies.splice(0)) await proxy.close();
});
const harness = useHarnesses();

describe('the first approval of two whose decision write ran but whose reply was lost', () => {
  it("is recorded as Bob's and he is not told it was refused", async () => {
    // Only Bob's decision write names him (the step's approvals, the audit pair).
    const proxy = await startReplyLosingProxy(inject('redisUrl'), 'UBOB');
    proxies.push(proxy);
    const h = await harness({ redisUrl: proxy.url, extraYaml: 'policy:\n  rules:\n    - name: two people\n      tools: [restart_service]\n      required: 2\n' });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'Restarted **worker** in staging.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in staging', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the approval card' });
    await h.settled();
    expect(proxy.cut()).toBe(false);

    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    expect((await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve })).status).toBe(200);
    await waitFor(() => proxy.cut(), { message: 'the decision reply to be cut' });
    await h.settled();
    const told = h.slack.callsTo('chat.postEphemeral').map((call) => String((call as { text?: unknown }).text ?? JSON.stringify(call)));
    const updates = h.slack.callsTo('chat.update').filter((call) => JSON.stringify(call).includes('UBOB'));
    expect({ told, cardShowsBob: updates.length > 0 }, 'Bob is told his (recorded) approval was refused, and the card never shows it').toEqual({ told: [], cardShowsBob: true });
    expect(told, 'Bob is told his (recorded) approval was refused').toEqual([]);
  }, 45_000);
});
