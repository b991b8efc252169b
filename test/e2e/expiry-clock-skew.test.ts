import { afterEach, describe, expect, it } from 'vitest';
import { watchBots } from '../helpers/bot-activity.js';
import { CHANNEL, cardButtons, nextTs, startHarness, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

/**
 * Review (expiry): whether a request has expired is judged by the local clock of whichever replica
 * takes the click (`Date.now()`, passed to `applyCallAction` as `now`), never by a clock the replicas
 * share (Redis `TIME`); so is a grant's expiry at the marker, and the sweep's due steps. A replica
 * whose clock runs behind accepts an Approve past the deadline another replica stamped on the card
 * (and stamps the approval with its own time, so the resume's `decision.at >= expiresAt` check
 * passes too): the call runs though the request had expired.
 *
 * Replica A (right clock) posts the card (expiry 2m); replica B's clock is 10 minutes behind. Five
 * minutes after the request, before any sweep has run, Bob's Approve reaches B. README: "a click
 * after `expiresAt` changes nothing even if no sweep has run yet".
 */
const harness = useHarnesses();
const extra: Harness[] = [];
afterEach(async () => {
  while (extra.length > 0) await extra.pop()?.stop();
});

const POLICY = `
policy:
  rules:
    - name: restarts
      tools: [restart_service]
      expiry: 2m
`;
const MINUTE = 60_000;

describe('a replica whose clock is behind', () => {
  it('refuses an Approve that comes after the request expired', async () => {
    const requestedAt = Date.UTC(2026, 10, 21, 12, 0);
    const clock = { now: requestedAt };
    const a = await harness({ extraYaml: POLICY, now: () => clock.now, sweepIntervalMs: 3_600_000 });
    const b = await startHarness({
      extraYaml: POLICY,
      now: () => clock.now - 10 * MINUTE,
      sweepIntervalMs: 3_600_000,
      shared: { slack: a.slack, openai: a.openai, keyPrefix: a.keyPrefix, logFile: a.logFile, watch: watchBots() },
    });
    extra.push(b);
    a.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'Restarted.' });
    const threadTs = nextTs();
    await a.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
    const card = await waitFor(() => threadReplies(a, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });

    // Five minutes on: the card's 2-minute deadline has passed by three minutes.
    clock.now = requestedAt + 5 * MINUTE;
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await b.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await waitFor(
      () =>
        a.slack.callsTo('chat.postEphemeral').some((call) => call.args.user === 'UBOB') ||
        threadReplies(a, threadTs).some((message) => message.text === 'Restarted.'),
      { message: 'an answer to the click' },
    );
    await a.settled();
    await b.settled();
    const outcome = {
      ran: a.invocations(),
      refusal: a.slack.callsTo('chat.postEphemeral').filter((call) => call.args.user === 'UBOB').map((call) => String(call.args.text)),
      cardSays: JSON.stringify(a.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!.blocks).includes('Approved by'),
      // Closed by the click's replica, as Redis's clock dates it, though its own says the deadline is ahead.
      closedAsExpired: JSON.stringify(a.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!.blocks).includes('Expired without a decision'),
    };
    expect(outcome).toEqual({ ran: [], refusal: ['This request expired before you acted, so nothing changed and it will not run.'], cardSays: false, closedAsExpired: true });
  });
});
