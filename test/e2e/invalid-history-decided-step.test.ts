import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createRedisKeys } from '../../src/store/redis-keys.js';
import { THREAD_STATE_SCHEMA_VERSION } from '../../src/store/thread-state.js';
import { CHANNEL, TEAM_ID, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * Reviewer test (c60e018). The lost-thread close covers a thread whose keys are gone, but not one whose
 * stored history no longer validates (an unreadable message: a tampered or corrupted value, or an older
 * release's message format). The resume then reads a fresh thread (validatedThread drops pendingStepId),
 * finds `pendingStepId !== stepId`, and returns: the approved call never runs, the card keeps saying
 * "Approved by", nobody is told, and every recovery sweep offers the decided step again until its TTL:
 * the very failure c60e018 fixed for an evicted thread.
 * (Fixer: the second case checks that a thread a newer release saved is still left to that release.)
 */
const harness = useHarnesses();

describe('a waiting card whose thread history no longer validates', () => {
  let admin: Redis;
  beforeAll(() => {
    admin = new Redis(inject('redisUrl'));
  });
  afterAll(async () => {
    await admin?.quit();
  });

  it('Approve either runs the call or closes it visibly, and no sweep offers the step again', async () => {
    const h = await harness({ sweepIntervalMs: 100, environment: { COUNTERSIGN_LOCK_TTL_MS: '300' } });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'Restarted worker in staging.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in staging', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the approval card' });
    await h.settled();

    const threadKey = `${TEAM_ID}:${CHANNEL}:${threadTs}`;
    const at = createRedisKeys({ keyPrefix: h.keyPrefix }).ofThread(threadKey);
    expect(await admin.llen(at.messages(threadKey))).toBeGreaterThan(0);
    // One stored message is no longer readable (corruption, a hand fix, an older format).
    await admin.lset(at.messages(threadKey), 0, 'not json');

    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    const stepId = approve.value.split(':')[0] as string;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await h.settled();
    await h.settled({ sweep: true });
    await h.settled({ sweep: true });

    const shown = JSON.stringify(h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)?.blocks);
    const others = threadReplies(h, threadTs).filter((message) => message.ts !== card.ts).map((message) => message.text);
    const summary = `card: ${shown}\nthread: ${JSON.stringify(others)}\nphase: ${(await h.bot.store.getStep(stepId))?.phase}\nevents: ${JSON.stringify(h.warnings().map((line) => (JSON.parse(line) as { event?: string }).event))}`;
    // The call ran, or the card says it did not.
    expect(h.invocations().length > 0 || shown.includes('Not run'), summary).toBe(true);
    // The decided step is not left for every sweep to offer again.
    expect((await h.bot.store.getStep(stepId))?.phase, summary).toBe('resumed');
    expect(h.warnings().filter((line) => line.includes('"resume-recovered"')), summary).toEqual([]);
    // Said for what it is: the history could not be read, not that Redis evicted it.
    expect(shown).toContain("the thread's saved history could not be read");
    expect(JSON.stringify(others)).toContain("I could not read this thread's saved conversation");
    const closed = (await h.auditEvents()).filter((event) => event.type === 'decision' && event.stepId === stepId && event.userId === 'countersign');
    expect(closed).toEqual([expect.objectContaining({ outcome: 'denied', toolName: 'restart_service', reason: expect.stringContaining("the thread's saved history could not be read") })]);
    expect(h.warnings().filter((line) => line.includes('"thread-history-unreadable"'))).toHaveLength(1);
  });

  it('a thread a newer release saved, in a message format this one does not read, is left to that release', async () => {
    const h = await harness({ sweepIntervalMs: 100, environment: { COUNTERSIGN_LOCK_TTL_MS: '300' } });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'Restarted worker in staging.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in staging', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the approval card' });
    await h.settled();

    const threadKey = `${TEAM_ID}:${CHANNEL}:${threadTs}`;
    const at = createRedisKeys({ keyPrefix: h.keyPrefix }).ofThread(threadKey);
    // The newer release's save: a schema version above this one's, and a message this one's validation refuses.
    const meta = JSON.parse((await admin.hget(at.thread(threadKey), 'meta'))!) as Record<string, unknown>;
    await admin.hset(at.thread(threadKey), 'meta', JSON.stringify({ ...meta, schemaVersion: THREAD_STATE_SCHEMA_VERSION + 1 }));
    await admin.lset(at.messages(threadKey), 0, JSON.stringify({ role: 'user', content: [{ type: 'a-part-from-the-future' }] }));

    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    const stepId = approve.value.split(':')[0] as string;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await waitFor(() => h.warnings().some((line) => line.includes('"item-left-to-newer-release"')), { message: 'the resume to be left to the newer release' });
    await h.settled();
    await h.settled({ sweep: true });

    const shown = JSON.stringify(h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)?.blocks);
    const others = threadReplies(h, threadTs).filter((message) => message.ts !== card.ts).map((message) => message.text);
    // Neither run nor closed: the step waits, decided, for the release that reads its thread.
    expect(h.invocations()).toEqual([]);
    expect(shown).not.toContain('Not run');
    expect(others).toEqual([]);
    expect((await h.bot.store.getStep(stepId))?.phase).toBe('complete');
    expect(await admin.llen(at.messages(threadKey))).toBeGreaterThan(0);
  });
});
