import { describe, expect, it } from 'vitest';
import { nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * 955c7f1 made a thread whose answer (`outbox`) holds a lone UTF-16 surrogate savable in Redis.
 * The answer is then posted to Slack: @slack/web-api sends top-level string arguments (`text`)
 * form-urlencoded with node:querystring, which throws "URI malformed" on a lone surrogate.
 */
const harness = useHarnesses();

describe('an answer that ends in half an emoji', () => {
  it('is posted to the thread', async () => {
    const h = await harness();
    h.openai.enqueue({ text: 'Deployed the api \ud83d' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'status?', ts: threadTs });
    await h.settled();
    await waitFor(() => threadReplies(h, threadTs).length >= 1, { message: 'a reply in the thread' });
    const texts = threadReplies(h, threadTs).map(({ text }: any) => String(text));
    expect(texts.join('\n')).toContain('Deployed the api');
  });
});
