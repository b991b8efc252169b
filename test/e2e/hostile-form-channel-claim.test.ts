import { describe, expect, it } from 'vitest';
import { encodeCallFormMetadata } from '../../src/slack/blocks/action-ids.js';
import { blockActionsPayload, postSlackInteraction, viewSubmissionPayload } from '../helpers/signed-request.js';
import { fillForm } from './fill-form.js';
import { CHANNEL, SIGNING_SECRET, TEAM_ID, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

/**
 * `channel` approvers mean the people of the thread's channel; a copy in #approvals widens nothing
 * (README, Approval policy). A click proves its channel by Slack's own `channel.id`; a form submit
 * names none, so the listeners take the channel from the form's `private_metadata`, unsigned by the
 * bot. A submit that claims the thread's channel is then judged as a click made there. Forged the
 * same way as the "forged form submission" of countersignature.test.ts. The claim now holds only for
 * someone Slack says is in that channel (users.conversations, as App Home asks).
 */
const harness = useHarnesses();
const APPROVALS = 'C0APPROVALS';
const NOT_A_MEMBER = 'You are not in the channel this request was made in, so nothing changed.';

/** The errors a submit's answer shows in the form; none when it was accepted (an empty ack). */
async function formErrorsOf(response: Response): Promise<Record<string, string>> {
  const body = await response.text();
  return body === '' ? {} : ((JSON.parse(body) as { errors?: Record<string, string> }).errors ?? {});
}

const POLICY = `
policy:
  rules:
    - name: anyone in ops
      tools: [restart_service]
      approvers: [channel]
      allowSelfApproval: false
      notify: { channels: [${APPROVALS}] }
`;

describe('a form submit claims the channel it was opened from', () => {
  it('someone who only sees the #approvals copy cannot approve a `channel` call by naming the thread\'s channel in the form', async () => {
    const h = await harness({ extraYaml: POLICY });
    // Dave sees only the #approvals copy: he is not in the thread's channel.
    h.slack.setChannelMembers(CHANNEL, ['UALICE', 'UBOB']);
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: 'Restarted.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the card' });
    const copy = await waitFor(() => h.slack.messages(APPROVALS).find((message) => cardButtons(message.blocks).length > 0), { message: 'the #approvals copy' });
    // The step records the copy after Slack has it: until then a click on it is from nowhere the step knows.
    await h.settled();
    const approve = cardButtons(copy.blocks).find((button) => button.actionId === 'countersign_approve')!;

    // Control: Dave's Approve on the copy is refused, as the README says.
    await postSlackInteraction({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, payload: blockActionsPayload({ user: 'UDAVE', channel: APPROVALS, messageTs: copy.ts, ...approve, teamId: TEAM_ID }) });
    const refusal = await waitFor(() => h.slack.callsTo('chat.postEphemeral').find((call) => call.args.user === 'UDAVE'), { message: 'the refusal' });
    expect(String(refusal.args.text)).toContain(`Only people in <#${CHANNEL}>`);

    // The same person submits "Approve & allow" naming the thread's channel instead of the copy's.
    const [stepId, approvalId] = approve.value.split(':');
    const response = await postSlackInteraction({
      url: h.eventsUrl,
      signingSecret: SIGNING_SECRET,
      payload: viewSubmissionPayload({
        user: 'UDAVE',
        teamId: TEAM_ID,
        callbackId: 'countersign_grant',
        privateMetadata: encodeCallFormMetadata({ stepId: stepId!, approvalId: approvalId!, version: 0, channel: CHANNEL }),
        values: {
          scope: { value: { type: 'radio_buttons', selected_option: { text: { type: 'plain_text', text: 't' }, value: 'thread' } } },
          duration: { value: { type: 'static_select', selected_option: { text: { type: 'plain_text', text: '1' }, value: '1' } } },
        },
      }),
    });
    const errors = await formErrorsOf(response);
    await h.settled();
    expect(h.invocations()).toEqual([]);
    expect((await h.auditEvents()).filter((event) => event.type === 'grant-created')).toEqual([]);
    // Refused in the form itself, saying why, and audited as a refused action.
    expect(errors.scope).toBe(NOT_A_MEMBER);
    expect((await h.auditEvents()).filter((event) => event.type === 'action-refused' && event.userId === 'UDAVE').map((event) => (event as { code?: string }).code)).toContain('wrong-channel');
  });

  it('nor deny it with a reason from a Deny form he opened on the copy and rewrote to name the thread\'s channel', async () => {
    const h = await harness({ extraYaml: POLICY });
    h.slack.setChannelMembers(CHANNEL, ['UALICE', 'UBOB']);
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: 'Denied.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
    const copy = await waitFor(() => h.slack.messages(APPROVALS).find((message) => cardButtons(message.blocks).length > 0), { message: 'the #approvals copy' });
    // The step records the copy after Slack has it: until then a click on it is from nowhere the step knows.
    await h.settled();
    const denyReason = cardButtons(copy.blocks).find((button) => button.actionId === 'countersign_deny_reason')!;
    await postSlackInteraction({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, payload: blockActionsPayload({ user: 'UDAVE', channel: APPROVALS, messageTs: copy.ts, ...denyReason, teamId: TEAM_ID }) });
    const view = (await waitFor(() => h.slack.callsTo('views.open')[0], { message: 'the deny form' })).args.view;
    expect(view.private_metadata).toContain(APPROVALS);

    const forged = { ...view, private_metadata: view.private_metadata.replace(APPROVALS, CHANNEL) };
    const response = await h.submitView({ user: 'UDAVE', view: forged, values: fillForm(view, { Reason: 'Restart payments-db instead.' }) });
    const errors = await formErrorsOf(response);
    await h.settled();
    expect((await h.auditEvents()).filter((event) => event.type === 'decision')).toEqual([]);
    expect(errors.reason).toBe(NOT_A_MEMBER);
  });

  it('someone removed from the channel after opening Edit in the thread cannot submit it', async () => {
    const h = await harness({ extraYaml: POLICY });
    h.slack.setChannelMembers(CHANNEL, ['UALICE', 'UBOB']);
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: 'Restarted.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).some((b) => b.actionId === 'countersign_edit')), { message: 'the card' });
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...cardButtons(card.blocks).find((b) => b.actionId === 'countersign_edit')! });
    const view = (await waitFor(() => h.slack.callsTo('views.open')[0], { message: 'the Edit form' })).args.view;

    // Bob leaves the channel (or is removed) with the form still open, then submits it.
    h.slack.setChannelMembers(CHANNEL, ['UALICE']);
    const response = await h.submitView({ user: 'UBOB', view, values: fillForm(view, { Namespace: 'staging' }) });
    const errors = await formErrorsOf(response);
    await h.settled();
    expect((await h.auditEvents()).filter((event) => event.type === 'input-edited')).toEqual([]);
    expect(Object.values(errors)).toContain(NOT_A_MEMBER);
    expect(h.invocations()).toEqual([]);
  });

  it('when Slack cannot say who is in the channel, the submit is refused (fail closed), saying so', async () => {
    const h = await harness({ extraYaml: POLICY });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: 'Restarted.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).some((b) => b.actionId === 'countersign_grant')), { message: 'the card' });
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...cardButtons(card.blocks).find((b) => b.actionId === 'countersign_grant')! });
    const view = (await waitFor(() => h.slack.callsTo('views.open')[0], { message: 'the grant form' })).args.view;

    h.slack.failWhen('users.conversations', () => true, { error: 'internal_error' });
    const response = await h.submitView({ user: 'UBOB', view, values: fillForm(view, {}) });
    const errors = await formErrorsOf(response);
    await h.settled();
    expect(h.invocations()).toEqual([]);
    expect(errors.scope).toContain('Could not check which channels you are in just now');

    // Once Slack answers again, the same form goes through.
    h.slack.failWhen('users.conversations', undefined);
    const retried = await h.submitView({ user: 'UBOB', view, values: fillForm(view, {}) });
    expect(retried.status).toBe(200);
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted.'), { message: 'the answer after Bob approved' });
    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'prod']]);
  });
});
