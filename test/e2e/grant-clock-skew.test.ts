import { afterEach, describe, expect, it } from 'vitest';
import { watchBots } from '../helpers/bot-activity.js';
import { grantFromCard } from './grant-form.js';
import { cardButtons, nextTs, startHarness, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

/**
 * A grant's end was stamped by the clock of the replica that took the "Approve & allow" form
 * (`Date.now()` there, `createdAt + hours`), while every other deadline is Redis's (`TIME`): a
 * replica ten minutes fast turned "for 1 h" into 70 minutes, and calls kept running without a card
 * after the hour the approver chose. And a reader whose clock ran fast deleted live grants from
 * Redis for every replica.
 *
 * Replica A's clock is Redis's (the harness's `serverClock`); replica B's runs ten minutes ahead.
 * Bob gives a one-hour grant through B; 65 minutes later, by Redis's clock, a matching call on A
 * must get a card.
 */
const harness = useHarnesses();
const extra: Harness[] = [];
afterEach(async () => {
  while (extra.length > 0) await extra.pop()?.stop();
});

const MINUTE = 60_000;
const restart = { name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } };

describe('a grant given through a replica whose clock is ahead', () => {
  it("ends an hour after it was given by Redis's clock, not the replica's", async () => {
    // Now, not a fixed date: the grants hash expires at its longest grant's end by Redis's real clock.
    const grantedAt = Date.now();
    const clock = { now: grantedAt };
    const a = await harness({ now: () => clock.now, sweepIntervalMs: 3_600_000 });
    const b = await startHarness({
      now: () => clock.now + 10 * MINUTE,
      sweepIntervalMs: 3_600_000,
      shared: { slack: a.slack, openai: a.openai, keyPrefix: a.keyPrefix, logFile: a.logFile, watch: watchBots() },
    });
    extra.push(b);

    a.openai.enqueue({ toolCalls: [restart] }, { text: 'Granted.' });
    const threadTs = nextTs();
    await a.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
    const card = await waitFor(() => threadReplies(a, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    // Through B, which shares A's fake Slack (and so records the form it opens).
    await grantFromCard(b, { card, threadTs, scope: 'channel', hours: 1 });
    await waitFor(() => threadReplies(a, threadTs).some((message) => message.text === 'Granted.'), { message: 'the approved call ran' });
    await a.settled();
    await b.settled();
    // Only A from here: the call below is judged by Redis's clock and A's, which agree.
    await extra.pop()?.stop();

    const created = (await a.auditEvents()).filter((event) => event.type === 'grant-created');
    expect(created.map((event) => (event.type === 'grant-created' ? event.expiresAt : undefined))).toEqual([grantedAt + 60 * MINUTE]);

    // 65 minutes on by Redis's clock: the grant's hour is over, so the same call gets a card.
    clock.now = grantedAt + 65 * MINUTE;
    a.openai.enqueue({ toolCalls: [restart] }, { text: 'Ran without a card.' });
    const laterTs = nextTs();
    await a.mention({ user: 'UALICE', text: 'restart the worker again', ts: laterTs });
    const outcome = await waitFor(
      () => threadReplies(a, laterTs).find((message) => message.text === 'Ran without a card.' || cardButtons(message.blocks).length > 0),
      { message: 'a card or the answer' },
    );
    expect({ card: cardButtons(outcome.blocks).length > 0, ran: a.invocations().length }).toEqual({ card: true, ran: 1 });
  });
});
