import { describe, expect, it } from 'vitest';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';
import { grantFromCard } from './grant-form.js';

const harness = useHarnesses();

const restart = () => ({ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } });

async function ask(h: Harness, options: { user: string; threadTs?: string; answer: string }) {
  h.openai.enqueue({ toolCalls: [restart()] }, { text: options.answer });
  const threadTs = options.threadTs ?? nextTs();
  const ts = options.threadTs ? nextTs() : threadTs;
  const seen = new Set(threadReplies(h, threadTs).map((message) => message.ts));
  await h.mention({ user: options.user, text: 'restart the worker', ts, ...(options.threadTs ? { threadTs: options.threadTs } : {}) });
  const fresh = () => threadReplies(h, threadTs).filter((message) => !seen.has(message.ts));
  const outcome = await waitFor(
    () => fresh().find((message) => message.text === options.answer) ?? fresh().find((message) => cardButtons(message.blocks).length > 0),
    { message: 'card or answer' },
  );
  return { threadTs, card: cardButtons(outcome.blocks).length > 0 ? outcome : undefined };
}

describe('the grant-used audit record names who used the grant', () => {
  it('records the person whose request the grant let through (audit-event.ts: "Who created, revoked or (by asking the bot) used the grant")', async () => {
    const h = await harness();
    // Alice asks, Bob approves with a channel grant.
    const first = await ask(h, { user: 'UALICE', answer: 'Restarted once.' });
    expect(first.card).toBeDefined();
    await grantFromCard(h, { card: first.card!, threadTs: first.threadTs, scope: 'channel', user: 'UBOB' });
    await waitFor(() => threadReplies(h, first.threadTs).some((message) => message.text === 'Restarted once.'), { message: 'first answer' });

    // Dave, in another thread of the channel, asks: the grant lets his call run without a card.
    const later = await ask(h, { user: 'UDAVE', answer: 'Restarted for Dave.' });
    expect(later.card).toBeUndefined();

    const used = await waitFor(async () => (await h.auditEvents()).find((event) => event.type === 'grant-used'), { message: 'grant-used record' });
    const events = await h.auditEvents();
    // Somewhere in the records of the grant-cleared run, the trail must say Dave asked for it.
    const runRecords = events.filter((event) => event.type === 'grant-used' || event.type === 'auto-approved' || event.type === 'tool-started').filter((event) => (event as { threadTs?: string }).threadTs === later.threadTs);
    expect(runRecords.length).toBeGreaterThan(0);
    // Nothing in the run's records (tool-started basis, auto-approved, grant-used) names Dave at all.
    expect(runRecords.some((event) => JSON.stringify(event).includes('UDAVE'))).toBe(true);
    expect((used as { userId: string }).userId).toBe('UDAVE');
    // The grantor stays on the record, in its own field.
    expect(used).toMatchObject({ grantId: expect.any(String), grantedBy: 'UBOB' });
  });
});
