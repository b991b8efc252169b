import { describe, expect, it } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import { nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();

/**
 * The hook approved one call of a step and left the other to people, then Slack refused the card:
 * the step is closed and nothing runs. The approved call did not run because the card failed, not
 * because a newer message came first (none did), and the model and the audit trail say so.
 */
describe('a card that cannot be posted, after the approval hook approved one of its calls', () => {
  it('tells the model, and records, that the hook-approved call was closed unrun on the card error', async () => {
    const h = await harness({
      onApprovalRequest: { name: 'staging-only', decide: ({ input }) => ((input as { namespace: string }).namespace === 'staging' ? { decision: 'approve' } : undefined) },
    });
    h.openai.enqueue({
      toolCalls: [
        { name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } },
        { name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } },
      ],
    });
    h.slack.failNext('chat.postMessage', { error: 'invalid_blocks' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in staging and the api in prod', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('could not post the approval card')), { message: 'notice' });
    await h.settled();
    expect(h.invocations()).toEqual([]);

    h.openai.enqueue({ text: 'ok' });
    await h.threadMessage({ user: 'UALICE', text: 'what happened?', threadTs, ts: nextTs() });
    await waitFor(() => h.openai.requests.length === 2, { message: 'the next model request' });
    const prompt = JSON.stringify(h.openai.requests[1]!.body);
    expect(prompt).not.toContain('a newer message arrived before every call in this step was decided');
    const told = conversationOf(h.openai.requests[1]!)
      .filter((message) => message.role === 'tool')
      .map((message) => message.text ?? '')
      .join('\n');
    expect(told, told).toContain('Not run: the approval card could not be posted (An API error occurred: invalid_blocks); it had been approved by the policy hook staging-only, but was closed before it ran. This was an error, not a decision');

    const decisions = (await h.auditEvents()).filter((event) => event.type === 'decision');
    expect(decisions.map((event) => ({ ...event }))).toEqual([
      expect.objectContaining({ outcome: 'approved', userId: 'hook:staging-only', originalInput: { service: 'worker', namespace: 'staging' } }),
      expect.objectContaining({ outcome: 'denied', userId: 'countersign', originalInput: { service: 'worker', namespace: 'staging' }, reason: expect.stringContaining('was closed before it ran') }),
      expect.objectContaining({ outcome: 'denied', userId: 'countersign', originalInput: { service: 'api', namespace: 'prod' }, reason: 'the approval card could not be posted (An API error occurred: invalid_blocks)' }),
    ]);
  });
});
