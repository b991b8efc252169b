import { describe, expect, it } from 'vitest';
import { blockActionsPayload, postSlackInteraction } from '../helpers/signed-request.js';
import { CHANNEL, SIGNING_SECRET, TEAM_ID, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();

const SRE = `
policy:
  rules:
    - name: sre
      tools: [restart_service]
      approvers: [group:S0SRE]
      expiry: 1h
      onExpiry: stop
`;

const restart = (service: string) => ({ name: 'restart_service', arguments: { service, namespace: 'prod' } });

describe('expiry notice after a resume revoked an approval', () => {
  it('does not tell the thread a call was denied when nobody denied it (the approval was revoked by countersign)', async () => {
    let clock = Date.UTC(2026, 10, 21, 12, 0);
    const h = await harness({ extraYaml: SRE, now: () => clock, sweepIntervalMs: 20 });
    h.slack.setUsergroupUsers('S0SRE', ['UBOB', 'UCAROL']);
    // A first request Carol approves, so the group (with Bob in it) is read and cached.
    h.openai.enqueue({ toolCalls: [restart('cache')] }, { text: 'Restarted once.' });
    const first = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart cache', ts: first });
    const firstCard = await waitFor(() => threadReplies(h, first).find((message) => cardButtons(message.blocks).length > 0), { message: 'first card' });
    const firstApprove = cardButtons(firstCard.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await postSlackInteraction({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, payload: blockActionsPayload({ user: 'UCAROL', channel: CHANNEL, messageTs: firstCard.ts, threadTs: first, ...firstApprove, teamId: TEAM_ID }) });
    await waitFor(() => threadReplies(h, first).some((message) => message.text === 'Restarted once.'), { message: 'first answer' });
    h.slack.setUsergroupUsers('S0SRE', ['UCAROL']);

    h.openai.enqueue({ toolCalls: [restart('worker'), restart('api')] });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker and the api', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    const approveFirst = cardButtons((card.blocks as any[]).filter((block) => String(block.block_id).startsWith('countersign_call_0_'))).find((button) => button.actionId === 'countersign_approve')!;
    // Bob's click reads the cached group (allowed); the resume reads it fresh and revokes the approval.
    await postSlackInteraction({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, payload: blockActionsPayload({ user: 'UBOB', channel: CHANNEL, messageTs: card.ts, threadTs, ...approveFirst, teamId: TEAM_ID }) });
    await waitFor(() => JSON.stringify(h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)?.blocks).includes('Approved by <@UBOB>'), { message: "Bob's approval on the card" });
    clock += 2 * 60 * 60 * 1000;
    const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.startsWith(':alarm_clock:')), { message: 'notice' });
    await h.settled();
    const audit = await h.auditEvents();
    expect(audit.filter((event) => event.type === 'action-refused')).toEqual([expect.objectContaining({ userId: 'UBOB', code: 'approval-revoked' })]);
    // Nobody denied anything: Bob approved, countersign closed his call ("Not run" on the card).
    const cardNow = JSON.stringify(h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)?.blocks);
    expect(cardNow).toContain('Not run');
    expect(notice.text).not.toContain('denied');
    expect(h.invocations()).toHaveLength(1);
  }, 30_000);
});
