import { describe, expect, it } from 'vitest';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();
const APPROVALS = 'C0APPROVALS';
const ELSEWHERE = 'C0RANDOM01';

/**
 * README ("copies"): a rule's `notify.channels` posts a copy of the card in #approvals, where its
 * approvers decide. `/countersign pending` typed there listed only requests whose thread is in
 * #approvals, so it answered "No approval requests are waiting in this channel" beside the copies.
 */
const ROUTED = `
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      approvers: [U0OPS1]
      notify: { thread: false, channels: [${APPROVALS}] }
`;

const text = (value: unknown) => JSON.stringify(value ?? []);

/** Carol's answers to `/countersign pending`, in order. */
const answers = (h: Harness) => h.slack.callsTo('chat.postEphemeral').filter((call) => call.args.user === 'UCAROL');

async function pendingIn(h: Harness, channel: string) {
  const before = answers(h).length;
  await h.slashCommand({ user: 'UCAROL', text: 'pending', channel });
  const answer = await waitFor(() => answers(h)[before], { message: `the pending list in ${channel}` });
  return { channel: String(answer.args.channel), text: String(answer.args.text), blocks: text(answer.args.blocks) };
}

describe('/countersign pending in the channel the copies go to', () => {
  it('lists the requests whose copy waits there, linked to that copy, and no longer once decided', async () => {
    const h = await harness({ extraYaml: ROUTED });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: 'Restarted.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).find((message) => /waiting for approval in/i.test(text(message.blocks))), { message: 'the thread card naming its copy' });
    const copy = await waitFor(() => h.slack.messages(APPROVALS).find((message) => cardButtons(message.blocks).length > 0), { message: 'the copy in #approvals' });

    const inApprovals = await pendingIn(h, APPROVALS);
    expect(inApprovals.channel).toBe(APPROVALS);
    expect(inApprovals.text).toBe('1 approval request(s) waiting');
    expect(inApprovals.blocks).toContain('`restart_service` requested by <@UALICE>');
    expect(inApprovals.blocks).toContain(`/archives/${APPROVALS}/p${copy.ts.replace('.', '')}|open the card>`);
    // Where the thread is, as before.
    expect((await pendingIn(h, CHANNEL)).text).toBe('1 approval request(s) waiting');
    // A channel with neither the thread nor a copy still lists nothing.
    expect((await pendingIn(h, ELSEWHERE)).text).toBe('No approval requests are waiting in this channel.');

    const approve = cardButtons(copy.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await h.click({ user: 'U0OPS1', cardTs: copy.ts, threadTs, ...approve });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted.'), { message: 'the answer' });
    await h.settled();
    expect((await pendingIn(h, APPROVALS)).text).toBe('No approval requests are waiting in this channel.');
  });
});
