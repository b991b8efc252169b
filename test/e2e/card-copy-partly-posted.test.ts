import { describe, expect, it } from 'vitest';
import { directMessageChannel } from '../../src/sandbox/emulator/web-api/workspace-methods.js';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();
const APPROVALS = 'C0APPROVALS';

/** The on-call lead gets a DM; the SRE group decides in #approvals; the thread's card only shows the state. */
const POLICY = `
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      approvers: [U0LEAD, group:S0SRE]
      notify: { thread: false, channels: [${APPROVALS}], dmApprovers: true }
`;

const text = (message: { blocks?: unknown[] } | undefined) => JSON.stringify(message?.blocks ?? []);

describe('a copy that cannot be posted while another one can', () => {
  it('keeps the buttons on the thread\'s card for the approvers the missing copy was for', async () => {
    const h = await harness({ extraYaml: POLICY });
    h.slack.setUsergroupUsers('S0SRE', ['UBOB']);
    // The bot was never invited to #approvals.
    h.slack.failWhen('chat.postMessage', (call) => call.args.channel === APPROVALS, { error: 'not_in_channel' });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: 'Restarted.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
    await waitFor(() => h.slack.messages(directMessageChannel('U0LEAD')).find((message) => text(message).includes('Requested in')), { message: "the lead's DM copy" });
    await h.settled();
    const threadCard = threadReplies(h, threadTs).find((message) => text(message).includes('Approval needed'))!;
    // Bob (in @sre) may approve, and the only copy is the lead's DM: the thread's card is where he decides.
    expect(text(threadCard)).not.toContain('Waiting for approval in a DM to <@U0LEAD>');
    expect(text(threadCard)).toContain('Also waiting for approval in a DM to <@U0LEAD>');
    expect(cardButtons(threadCard.blocks).length).toBeGreaterThan(0);
  });
});
