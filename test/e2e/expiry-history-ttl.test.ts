import { describe, expect, it } from 'vitest';
import { threadKeyOf } from '../../src/store/thread-state.js';
import { CHANNEL, TEAM_ID, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * A pending step was stored with the thread history's TTL (`history.ttlHours`), not for as long as
 * it can wait. The config accepts any `ttlHours` and any `expiry` up to 30d, with no check between
 * them, so `history: { ttlHours: 12 }` with the default 24h expiry (or the default 168h with
 * `expiry: 14d`) had every unanswered request's record vanish before its deadline. The expiry sweep
 * then found no step and quietly unscheduled it: the card kept its Approve/Deny buttons and
 * "expires …" forever, the thread never heard that the request expired, the model was never told,
 * and the audit trail had no `expired` record. The step, and the thread it waits in, are now kept
 * until its deadline and a grace (`stepRecordTtlMs`), and no save of the thread shortens that.
 *
 * Here `ttlHours: 0.00125` (4.5 s of real Redis time) stands in for 12 hours, and the bot's clock is
 * moved past the 1h expiry once a thread saved after the request's has lapsed.
 */
const harness = useHarnesses();

const POLICY = `
history:
  ttlHours: 0.00125
policy:
  rules:
    - name: restarts
      tools: [restart_service]
      expiry: 1h
`;

describe('a request that waits longer than the history TTL', () => {
  it('is still expired: the card is closed and the thread is told', async () => {
    const requestedAt = Date.UTC(2026, 10, 21, 12, 0);
    const clock = { now: requestedAt };
    const h = await harness({ extraYaml: POLICY, now: () => clock.now, sweepIntervalMs: 20 });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    const stepId = cardButtons(card.blocks)[0]!.value.split(':')[0]!;
    await h.settled();

    // Barrier: a thread saved after every save of the request's lapses (history TTL) while the request is hours from its expiry.
    h.openai.enqueue({ text: 'Hello there.' }, { text: 'Restarted.' });
    const otherTs = nextTs();
    await h.mention({ user: 'UBOB', text: 'hi', ts: otherTs });
    await h.settled();
    expect(threadReplies(h, otherTs).map((message) => message.text)).toEqual(['Hello there.']);
    await waitFor(async () => (await h.bot.store.getThread(threadKeyOf({ teamId: TEAM_ID, channel: CHANNEL, threadTs: otherTs }))) === undefined, {
      message: 'the other thread to lapse',
      timeoutMs: 20_000,
    });
    expect(await h.bot.store.getStep(stepId)).toMatchObject({ phase: 'pending' });
    expect(await h.bot.store.getThread(threadKeyOf({ teamId: TEAM_ID, channel: CHANNEL, threadTs }))).toMatchObject({ pendingStepId: stepId });

    clock.now = requestedAt + 61 * 60 * 1000;
    await h.settled({ sweep: true });
    const current = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
    const outcome = {
      buttonsLeft: cardButtons(current.blocks).length,
      cardSaysExpired: JSON.stringify(current.blocks).includes('Expired without a decision'),
      threadTold: threadReplies(h, threadTs).some((message) => message.text.includes('expired')),
      audited: (await h.auditEvents()).some((event) => event.type === 'expired'),
    };
    expect(outcome).toEqual({ buttonsLeft: 0, cardSaysExpired: true, threadTold: true, audited: true });
  });
});
