import { describe, expect, it } from 'vitest';
import { CHANNEL, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();

describe('a call auto-approve mode ran, in a turn whose next model call fails', () => {
  it('still says in the thread that the call ran without a card', async () => {
    const h = await harness({ extraYaml: `
policy:
  autoApprove:
    channels: [${CHANNEL}]
` });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { error: { status: 400, message: 'model exploded' } });
    const threadTs = nextTs();
    await h.mention({ user: 'UBOT_SCHEDULER', text: 'nightly restart', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text.includes('Try again') || JSON.stringify(message.blocks ?? '').includes('Try again')), { message: 'the failure' });
    await h.settled();
    // The tool ran (and was audited as auto-approved)...
    expect(h.invocations()).toHaveLength(1);
    expect((await h.auditEvents()).filter((event) => event.type === 'auto-approved')).toHaveLength(1);
    // ...so the thread should get its one-line note, as for a turn that answered.
    const texts = threadReplies(h, threadTs).map((message) => message.text);
    expect(texts.some((text) => text.includes('ran without a card'))).toBe(true);
  });
});
