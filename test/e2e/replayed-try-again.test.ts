import { describe, expect, it } from 'vitest';
import { blockActionsPayload, postSlackInteraction } from '../helpers/signed-request.js';
import { CHANNEL, SIGNING_SECRET, TEAM_ID, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();

describe('a replayed Try again click (same payload, same action_ts)', () => {
  it('runs the retried turn once', async () => {
    const h = await harness();
    h.openai.enqueue({ error: { status: 400, message: 'model exploded' } });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'hello', ts: threadTs });
    const notice = await waitFor(() => threadReplies(h, threadTs).find((m) => cardButtons(m.blocks).some((b) => b.actionId === 'countersign_retry')), { message: 'notice' });
    await h.settled();
    const retry = cardButtons(notice.blocks).find((b) => b.actionId === 'countersign_retry')!;
    h.openai.enqueue({ text: 'Retried answer.' }, { text: 'Second retried answer.' });
    const payload = blockActionsPayload({ user: 'UALICE', channel: CHANNEL, messageTs: notice.ts, threadTs, actionId: retry.actionId, value: retry.value, teamId: TEAM_ID });
    await Promise.all([postSlackInteraction({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, payload }), postSlackInteraction({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, payload })]);
    await waitFor(() => threadReplies(h, threadTs).some((m) => m.text === 'Retried answer.'), { message: 'answer' });
    await h.settled();
    expect(h.openai.requests).toHaveLength(2);
    expect(threadReplies(h, threadTs).map((m) => m.text).filter((t) => t.includes('Retried') || t.includes('retried'))).toEqual(['Retried answer.']);
  });
});
