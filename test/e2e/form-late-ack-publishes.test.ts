import { describe, expect, it } from 'vitest';
import { postSlackEvent } from '../helpers/signed-request.js';
import { SIGNING_SECRET, TEAM_ID, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();
const SRE_ONLY = `
policy:
  rules:
    - name: sre
      tools: [restart_service]
      approvers: [group:S0SRE]
`;

/**
 * A form submit (here "Deny with reason") records its decision before it answers Slack. When the
 * record took longer than Slack's 3 s (the approver's group asked of a slow Slack), Bolt has answered
 * the request itself and the listener's late `ack` throws. The decision was recorded all the same:
 * the thread must go on (the model told of the denial) at once, not once the lock this process
 * claimed for the resume lapses and a recovery sweep finds it.
 */
describe('a form submit whose decision is recorded after Slack stopped waiting', () => {
  it('still resumes the thread with the decision', async () => {
    const h = await harness({ extraYaml: SRE_ONLY, sweepIntervalMs: 3_600_000 });
    h.slack.setUsergroupUsers('S0SRE', ['UBOB']);
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } }] }, { text: 'Understood, not restarting.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart api in prod', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    const denyReason = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_deny_reason')!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...denyReason });
    const view = (await waitFor(() => h.slack.callsTo('views.open')[0], { message: 'views.open' })).args.view as { callback_id: string; private_metadata: string };
    // Slack says @sre changed: the submit's check asks Slack again, and Slack is slow to answer.
    const event = { type: 'subteam_members_changed', subteam_id: 'S0SRE', team_id: TEAM_ID, date_previous_update: 1, date_update: 2, added_users: ['UBOB'], added_users_count: 1, event_ts: '2.000001' };
    const envelope = { token: 'legacy', team_id: TEAM_ID, api_app_id: 'A0COUNTERSIGN', event, type: 'event_callback', event_id: `Ev${nextTs().replace('.', '')}`, event_time: 2, authorizations: [] };
    expect((await postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope })).status).toBe(200);
    await h.settled();
    const groups = h.slack.holdNext('usergroups.users.list');
    const submitted = h.submitView({ user: 'UBOB', view, values: { reason: { value: { type: 'plain_text_input', value: 'frozen' } } } });
    await groups.received;
    // Bolt answers the request itself once Slack's 3 s are up; only then does Slack answer about @sre.
    const answered = await submitted;
    groups.release();
    await waitFor(async () => (await h.auditEvents()).some((entry) => entry.type === 'decision'), { message: "Bob's deny recorded" });
    const resumed = await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Understood, not restarting.'), { message: 'the thread resumed', timeoutMs: 5_000 }).catch(() => false);
    // Answered by Bolt, not by the listener: its ack came too late.
    expect({ status: answered.status, resumed }, 'the late ack threw before the recorded deny was published').toEqual({ status: 404, resumed: true });
  }, 30_000);
});
