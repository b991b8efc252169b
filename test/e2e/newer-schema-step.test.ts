import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { PENDING_STEP_SCHEMA_VERSION } from '../../src/approvals/pending-step.js';
import { NEWER_RELEASE_THREAD_TEXT } from '../../src/conversation/newer-release-item.js';
import { THREAD_STATE_SCHEMA_VERSION } from '../../src/store/thread-state.js';
import { decodeApprovalActionValue } from '../../src/slack/blocks/action-ids.js';
import { createRedisKeys } from '../../src/store/redis-keys.js';
import { CHANNEL, TEAM_ID, cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

/**
 * A rolling deploy (or a rollback) runs two releases on one Redis. A card posted by the next
 * release stores its step with `schemaVersion: PENDING_STEP_SCHEMA_VERSION + 1`, which this release
 * (the "older replica") cannot read. Simulated by rewriting the stored step's schemaVersion through
 * the raw key while this release handles the thread; putting it back stands for the newer replica
 * (which reads what it wrote) handling the next event.
 */
const harness = useHarnesses();
const restartCall = { name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } };

async function postedCard(h: Harness, threadTs: string) {
  const card = await waitFor(() => h.slack.messages(CHANNEL, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the card' });
  const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
  return { card, approve, stepId: decodeApprovalActionValue(approve.value)!.stepId };
}

function schemaSwitch(h: Harness, raw: Redis, stepId: string) {
  const key = createRedisKeys({ keyPrefix: h.keyPrefix }).ofStep(stepId).step(stepId);
  return {
    key,
    async set(version: number) {
      const data = JSON.parse((await raw.hget(key, 'data'))!) as { schemaVersion: number };
      data.schemaVersion = version;
      await raw.hset(key, 'data', JSON.stringify(data));
    },
  };
}

describe('a card whose step a newer release wrote, handled by this release', () => {
  it('a click this release cannot judge is not told the request is closed, and changes nothing', async () => {
    const h = await harness();
    const raw = new Redis(inject('redisUrl'));
    try {
      h.openai.enqueue({ toolCalls: [restartCall] }, { text: 'Still waiting on the approval.' }, { text: 'Restarted.' });
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
      const { card, approve, stepId } = await postedCard(h, threadTs);
      await h.settled();
      const step = schemaSwitch(h, raw, stepId);
      await step.set(PENDING_STEP_SCHEMA_VERSION + 1);
      const stored = await raw.hgetall(step.key);

      await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
      const answer = await waitFor(() => h.slack.callsTo('chat.postEphemeral').map((call) => String(call.args.text))[0], { message: 'the answer to the click' });
      await h.settled();

      expect(await raw.hgetall(step.key)).toEqual(stored);
      expect(h.invocations()).toEqual([]);
      // The request is open (the newer release shows and decides it): "no longer open" sends Bob away from a live request.
      expect(answer).not.toMatch(/no longer open/i);
      expect(answer).toMatch(/newer version of countersign/);
      const refusals = (await h.auditEvents()).filter((event) => event.type === 'action-refused');
      expect(refusals.map((event) => (event as { code?: string }).code)).toEqual(['newer-schema']);
    } finally {
      raw.disconnect();
    }
  });

  it("a new message in the thread leaves the card's approval able to run it (or closes the card), not approvable but never run", async () => {
    const h = await harness();
    const raw = new Redis(inject('redisUrl'));
    try {
      h.openai.enqueue({ toolCalls: [restartCall] }, { text: 'Still waiting on the approval.' }, { text: 'Restarted.' });
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
      const { card, approve, stepId } = await postedCard(h, threadTs);
      await h.settled();
      const step = schemaSwitch(h, raw, stepId);

      // This release takes Alice's follow-up while the step is in the newer format (it says it cannot continue the thread).
      await step.set(PENDING_STEP_SCHEMA_VERSION + 1);
      await h.threadMessage({ user: 'UALICE', text: 'any news?', threadTs });
      await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === NEWER_RELEASE_THREAD_TEXT || message.text.includes('Still waiting on the approval.')), { message: 'the answer to the follow-up' });
      await h.settled();

      // The newer release takes Bob's Approve on the card, which still has its buttons.
      await step.set(PENDING_STEP_SCHEMA_VERSION);
      const shown = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
      const stillApprovable = cardButtons(shown.blocks).some((button) => button.actionId === 'countersign_approve');
      await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
      await waitFor(async () => (await h.auditEvents()).some((event) => event.type === 'decision' || event.type === 'action-refused'), { message: 'the click judged' });
      await h.settled();

      const approved = (await h.auditEvents()).some((event) => event.type === 'decision' && (event as { outcome?: string }).outcome === 'approved');
      const cardNow = JSON.stringify(h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!.blocks);
      expect({ stillApprovable, approved, cardSaysApprovedByBob: cardNow.includes('Approved by <@UBOB>'), invocations: h.invocations().length }).toEqual(
        approved ? { stillApprovable, approved, cardSaysApprovedByBob: true, invocations: 1 } : { stillApprovable, approved, cardSaysApprovedByBob: false, invocations: 0 },
      );
    } finally {
      raw.disconnect();
    }
  });

  it("a thread a newer release saved is not overwritten by this release's next turn (its history and open card kept)", async () => {
    const h = await harness();
    const raw = new Redis(inject('redisUrl'));
    try {
      h.openai.enqueue({ toolCalls: [restartCall] }, { text: 'Hello again.' });
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
      const { stepId } = await postedCard(h, threadTs);
      await h.settled();
      const threadKey = `${TEAM_ID}:${CHANNEL}:${threadTs}`;
      const at = createRedisKeys({ keyPrefix: h.keyPrefix }).ofThread(threadKey);
      // The newer release saved the thread (say, as it posted the card) in its format.
      const meta = JSON.parse((await raw.hget(at.thread(threadKey), 'meta'))!) as { schemaVersion: number; pendingStepId?: string };
      expect(meta.pendingStepId).toBe(stepId);
      await raw.hset(at.thread(threadKey), 'meta', JSON.stringify({ ...meta, schemaVersion: THREAD_STATE_SCHEMA_VERSION + 1 }));
      const historyBefore = await raw.lrange(at.messages(threadKey), 0, -1);

      // This release takes Alice's follow-up (it says it cannot continue the thread).
      await h.mention({ user: 'UALICE', text: 'any news?', threadTs });
      await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === NEWER_RELEASE_THREAD_TEXT || message.text.includes('Hello again.')), { message: 'the answer to the follow-up' });
      await h.settled();

      const metaAfter = JSON.parse((await raw.hget(at.thread(threadKey), 'meta'))!) as { schemaVersion: number; pendingStepId?: string };
      const historyAfter = await raw.lrange(at.messages(threadKey), 0, -1);
      expect({ pendingStepId: metaAfter.pendingStepId, historyKept: historyBefore.every((message) => historyAfter.includes(message)) }).toEqual({ pendingStepId: stepId, historyKept: true });
    } finally {
      raw.disconnect();
    }
  });

  it('a reply without a mention in a thread a newer release saved is followed: told this process cannot continue it, the thread left as it was', async () => {
    const h = await harness();
    const raw = new Redis(inject('redisUrl'));
    try {
      h.openai.enqueue({ text: 'Hello.' });
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'hi', ts: threadTs });
      await waitFor(() => threadReplies(h, threadTs).some((message) => message.text.includes('Hello.')), { message: 'the first answer' });
      await h.settled();
      const threadKey = `${TEAM_ID}:${CHANNEL}:${threadTs}`;
      const at = createRedisKeys({ keyPrefix: h.keyPrefix }).ofThread(threadKey);
      const meta = JSON.parse((await raw.hget(at.thread(threadKey), 'meta'))!) as { schemaVersion: number };
      await raw.hset(at.thread(threadKey), 'meta', JSON.stringify({ ...meta, schemaVersion: THREAD_STATE_SCHEMA_VERSION + 1 }));
      const stored = { meta: await raw.hget(at.thread(threadKey), 'meta'), history: await raw.lrange(at.messages(threadKey), 0, -1) };

      await h.threadMessage({ user: 'UALICE', text: 'and the worker?', threadTs });
      await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === NEWER_RELEASE_THREAD_TEXT), { message: 'the answer to the reply' });
      await h.settled();

      expect({ meta: await raw.hget(at.thread(threadKey), 'meta'), history: await raw.lrange(at.messages(threadKey), 0, -1) }).toEqual(stored);
    } finally {
      raw.disconnect();
    }
  });
});
