import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();
const restartCall = { name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } };

describe('on a 3-master Redis Cluster (REDIS_URL=redis+cluster://…)', () => {
  it('mention → card → signed Approve → the tool runs once → the answer, with two bot processes', async () => {
    const h = await harness({ redisUrl: inject('redisClusterUrl') });
    const replica = await h.startReplica();
    onTestFinished(() => replica.stop());
    h.openai.enqueue({ toolCalls: [restartCall] }, { text: 'Restarted **worker** in staging.' });
    const threadTs = nextTs();
    expect((await h.mention({ user: 'UALICE', text: 'restart the worker in staging', ts: threadTs })).status).toBe(200);
    const card = await waitFor(() => h.slack.messages(CHANNEL, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the approval card' });

    // The click reaches the other process: the step, its thread and its schedules are found there.
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    expect((await replica.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve })).status).toBe(200);
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text.includes('Restarted *worker* in staging.')), { message: 'the answer' });
    await h.settled();
    await replica.settled();
    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'staging']]);
    expect((await h.auditEvents()).map((event) => event.type)).toEqual(['approval-requested', 'decision', 'tool-started', 'tool-executed']);
  });
});
