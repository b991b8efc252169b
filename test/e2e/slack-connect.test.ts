import { describe, expect, it } from 'vitest';
import { appHomeOpenedEnvelope, appMentionEnvelope, blockActionsPayload, homeActionsPayload, messageEnvelope, postSlackEvent, postSlackInteraction } from '../helpers/signed-request.js';
import { BOT_USER_ID, CHANNEL, SIGNING_SECRET, TEAM_ID, cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();

/** The README's "anyone in the channel" rule, one approver. */
const CHANNEL_RULE = `
policy:
  rules:
    - name: anyone here
      tools: [restart_service]
      approvers: [channel]
`;

/** The Slack Connect partner organisation's workspace. */
const PARTNER_TEAM = 'T0PARTNER1';
/** Our Enterprise Grid organisation, and another workspace of it. */
const ENTERPRISE = 'E0ACME0001';
const SISTER_TEAM = 'T0SISTER01';

async function cardFor(h: Harness) {
  h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'payments-api', namespace: 'prod' } }] }, { text: 'Restarted.' });
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'restart payments-api in prod', ts: threadTs });
  const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
  const button = (actionId: string) => cardButtons(card.blocks).find((candidate) => candidate.actionId === actionId)!;
  return { threadTs, card, approve: button('countersign_approve'), deny: button('countersign_deny') };
}

/**
 * A block_actions payload as Slack sends it from a shared channel: `team` is the workspace the app
 * is installed in (the one that posted the card), `user.team_id` is the clicker's own workspace
 * (slackapi/java-slack-sdk#1041 shows such a payload); on Enterprise Grid `enterprise` is the install's.
 */
function sharedChannelClick(options: { user: string; userTeam: string; enterprise?: string; card: { ts: string }; threadTs: string; button: { actionId: string; value: string } }) {
  const payload = blockActionsPayload({ user: options.user, channel: CHANNEL, messageTs: options.card.ts, threadTs: options.threadTs, ...options.button, teamId: TEAM_ID }) as {
    user: { team_id: string };
    enterprise: { id: string; name: string } | null;
  };
  payload.user.team_id = options.userTeam;
  if (options.enterprise) payload.enterprise = { id: options.enterprise, name: 'Acme' };
  return payload;
}

const ephemeralTexts = (h: Harness) => h.slack.callsTo('chat.postEphemeral').map((call) => String(call.args.text));
const refusals = async (h: Harness) => (await h.auditEvents()).flatMap((event) => (event.type === 'action-refused' ? [event] : []));

describe('Slack Connect: only members of the organisation act on its requests', () => {
  it('refuses an Approve and a Deny from a user of another organisation in a shared channel (README: "the clicker\'s workspace ... must be the request\'s")', async () => {
    const h = await harness({ extraYaml: CHANNEL_RULE });
    const { threadTs, card, approve, deny } = await cardFor(h);

    for (const button of [approve, deny]) {
      const payload = sharedChannelClick({ user: 'UPARTNER1', userTeam: PARTNER_TEAM, card, threadTs, button });
      expect((await postSlackInteraction({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, payload })).status).toBe(200);
    }
    await h.settled();

    // Nobody of the partner organisation countersigned (or turned down) a prod restart in our workspace.
    expect(h.invocations()).toEqual([]);
    expect((await h.auditEvents()).filter((event) => event.type === 'decision')).toEqual([]);
    expect(ephemeralTexts(h)).toEqual([expect.stringContaining("not a member of this workspace's organisation"), expect.stringContaining("not a member of this workspace's organisation")]);
    // Recorded with the request's channel, so they are kept with that channel's shard.
    expect((await refusals(h)).map((event) => [event.userId, event.action, event.code, event.channel])).toEqual([
      ['UPARTNER1', 'approve', 'external-user', CHANNEL],
      ['UPARTNER1', 'deny', 'external-user', CHANNEL],
    ]);

    // The card is still open to our own people.
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted.'), { message: 'the answer after Bob approved' });
    expect(h.invocations()).toHaveLength(1);
  });

  it('on Enterprise Grid counts a member of another workspace of the same enterprise, as users.info says, and refuses one of another enterprise', async () => {
    const h = await harness({ extraYaml: CHANNEL_RULE });
    const enterpriseOf: Record<string, string> = { USISTER1: ENTERPRISE, UOTHERCO: 'E0OTHER001' };
    h.slack.setMethodHandler('users.info', (call) => ({
      ok: true,
      user: { id: call.args.user, team_id: SISTER_TEAM, enterprise_user: { id: call.args.user, enterprise_id: enterpriseOf[String(call.args.user)], teams: [SISTER_TEAM] } },
    }));
    const { threadTs, card, approve } = await cardFor(h);

    // The enterprise id in the payload is the install's: it proves nothing about the clicker.
    await postSlackInteraction({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, payload: sharedChannelClick({ user: 'UOTHERCO', userTeam: 'T0OTHERCO1', enterprise: ENTERPRISE, card, threadTs, button: approve }) });
    await h.settled();
    expect(h.invocations()).toEqual([]);
    expect((await refusals(h)).map((event) => [event.userId, event.code])).toEqual([['UOTHERCO', 'external-user']]);

    await postSlackInteraction({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, payload: sharedChannelClick({ user: 'USISTER1', userTeam: SISTER_TEAM, enterprise: ENTERPRISE, card, threadTs, button: approve }) });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted.'), { message: 'the answer after the sister workspace approved' });
    expect(h.invocations()).toHaveLength(1);
    const decision = (await h.auditEvents()).find((event) => event.type === 'decision');
    expect(decision).toMatchObject({ outcome: 'approved', userId: 'USISTER1' });
  });

  it('on Enterprise Grid refuses, and says it could not check, when users.info fails', async () => {
    const h = await harness({ extraYaml: CHANNEL_RULE });
    h.slack.failWhen('users.info', () => true, { error: 'fatal_error' });
    const { threadTs, card, approve } = await cardFor(h);

    await postSlackInteraction({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, payload: sharedChannelClick({ user: 'USISTER1', userTeam: SISTER_TEAM, enterprise: ENTERPRISE, card, threadTs, button: approve }) });
    const answer = await waitFor(() => ephemeralTexts(h)[0], { message: 'the answer to the click' });
    await h.settled();

    expect(answer).toContain('could not check');
    expect(h.invocations()).toEqual([]);
    expect((await refusals(h)).map((event) => [event.userId, event.code])).toEqual([['USISTER1', 'membership-unverified']]);
  });

  it('does not take a request from a user of another organisation, and tells them privately', async () => {
    const h = await harness({ extraYaml: CHANNEL_RULE });
    const ts = nextTs();
    // An app_mention from an externally shared channel: `team_id` is ours, `user_team` the poster's.
    const envelope = appMentionEnvelope({ user: 'UPARTNER1', text: `<@${BOT_USER_ID}> restart payments-api in prod`, channel: CHANNEL, teamId: TEAM_ID, botUserId: BOT_USER_ID, ts }) as {
      is_ext_shared_channel: boolean;
      event: Record<string, unknown>;
    };
    envelope.is_ext_shared_channel = true;
    envelope.event.user_team = PARTNER_TEAM;
    envelope.event.source_team = PARTNER_TEAM;
    envelope.event.team = PARTNER_TEAM;
    await postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope });
    const answer = await h.slack.waitForCall('chat.postEphemeral');
    await h.settled();

    expect(answer.args).toMatchObject({ user: 'UPARTNER1', thread_ts: ts, text: expect.stringContaining("only take requests from members of this workspace's organisation") });
    expect(h.openai.requests).toEqual([]);
    expect(threadReplies(h, ts)).toEqual([]);
    expect((await refusals(h)).map((event) => [event.userId, event.action, event.code])).toEqual([['UPARTNER1', 'request', 'external-user']]);
  });

  it('in a shared channel, asks Slack whose a message is when the event does not say, and takes a request from our own member', async () => {
    const h = await harness({ extraYaml: CHANNEL_RULE });
    usersOfTwoOrganisations(h);
    h.openai.enqueue({ text: 'Hello Alice.' });
    /** An app_mention from an externally shared channel that names neither `user_team` nor `team`. */
    const unattributedMention = async (user: string) => {
      const ts = nextTs();
      const envelope = appMentionEnvelope({ user, text: `<@${BOT_USER_ID}> hello`, channel: CHANNEL, teamId: TEAM_ID, botUserId: BOT_USER_ID, ts }) as {
        is_ext_shared_channel: boolean;
        event: Record<string, unknown>;
      };
      envelope.is_ext_shared_channel = true;
      delete envelope.event.team;
      await postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope });
      return ts;
    };

    const alices = await unattributedMention('UALICE');
    await waitFor(() => threadReplies(h, alices).some((message) => message.text === 'Hello Alice.'), { message: "the answer to Alice's mention" });
    const partners = await unattributedMention('UPARTNER1');
    const refusal = await h.slack.waitForCall('chat.postEphemeral', (call) => call.args.user === 'UPARTNER1');
    await h.settled();

    expect(refusal.args.text).toContain("only take requests from members of this workspace's organisation");
    expect(h.openai.requests).toHaveLength(1);
    expect(threadReplies(h, partners)).toEqual([]);
    expect((await refusals(h)).map((event) => [event.userId, event.action, event.code])).toEqual([['UPARTNER1', 'request', 'external-user']]);
  });

  it('leaves out, without a word, a reply from a user of another organisation in a thread it follows', async () => {
    const h = await harness({ extraYaml: CHANNEL_RULE });
    h.openai.enqueue({ text: 'Hello Alice.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'hello', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Hello Alice.'), { message: 'the first answer' });

    const envelope = messageEnvelope({ user: 'UPARTNER1', text: 'also restart payments-api in prod', channel: CHANNEL, channelType: 'channel', threadTs, teamId: TEAM_ID }) as {
      is_ext_shared_channel: boolean;
      event: Record<string, unknown>;
    };
    envelope.is_ext_shared_channel = true;
    envelope.event.user_team = PARTNER_TEAM;
    envelope.event.team = PARTNER_TEAM;
    await postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope });
    await h.settled();

    expect(h.openai.requests).toHaveLength(1);
    expect(h.slack.callsTo('chat.postEphemeral')).toEqual([]);
    expect((await refusals(h)).map((event) => [event.userId, event.action, event.code, event.channel])).toEqual([['UPARTNER1', 'request', 'external-user', CHANNEL]]);
  });
});

/** Bob grants restart_service to the channel for 4 hours from Alice's card; returns the thread. */
async function grantedCall(h: Harness) {
  h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'granted' });
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
  const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
  const button = cardButtons(card.blocks).find((candidate) => candidate.actionId === 'countersign_grant')!;
  await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...button });
  const view = (await waitFor(() => h.slack.callsTo('views.open')[0], { message: 'grant form' })).args.view;
  const option = (value: string) => ({ text: { type: 'plain_text', text: value }, value });
  await h.submitView({
    user: 'UBOB',
    view,
    values: {
      scope: { value: { type: 'radio_buttons', selected_option: option('channel') } },
      duration: { value: { type: 'static_select', selected_option: option('4') } },
      identical: { value: { type: 'checkboxes', selected_options: [] } },
    },
  });
  await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'granted'), { message: 'answer' });
  return threadTs;
}

/** What `users.info` says of our people and of the partner's (a slash command's payload names only the workspace it was typed in). */
function usersOfTwoOrganisations(h: Harness) {
  h.slack.setMethodHandler('users.info', (call) => ({ ok: true, user: { id: call.args.user, team_id: String(call.args.user).startsWith('UPARTNER') ? PARTNER_TEAM : TEAM_ID } }));
}

/** The private answers to `/countersign …` typed by `user`, in order. */
const commandAnswers = (h: Harness, user: string) => h.slack.callsTo('chat.postEphemeral').filter((call) => call.args.user === user);

describe('Slack Connect: grants and the /countersign lists are for members of the organisation only', () => {
  it('refuses a Revoke from /countersign grants by a user of another organisation (README: "Every approve, deny, … and Revoke … the clicker must belong to the workspace\'s organisation")', async () => {
    const h = await harness();
    usersOfTwoOrganisations(h);
    const threadTs = await grantedCall(h);

    // Our own member lists the grants; the partner's person reuses the Revoke button's value (the grant id).
    await h.slashCommand({ user: 'UCAROL', text: 'grants' });
    const list = await waitFor(() => commandAnswers(h, 'UCAROL').find((call) => String(call.args.text).includes('active grant')), { message: 'grant list' });
    const revoke = (list.args.blocks as any[])[0].accessory;

    const payload = blockActionsPayload({ user: 'UPARTNER1', channel: CHANNEL, messageTs: '1.1', threadTs, actionId: revoke.action_id, value: revoke.value, teamId: TEAM_ID }) as { user: { team_id: string } };
    payload.user.team_id = PARTNER_TEAM;
    expect((await postSlackInteraction({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, payload })).status).toBe(200);
    const answer = await waitFor(() => commandAnswers(h, 'UPARTNER1')[0], { message: 'the answer to the partner' });
    await h.settled();

    expect(answer.args.text).toContain("not a member of this workspace's organisation");
    expect((await h.auditEvents()).map((event) => event.type)).not.toContain('grant-revoked');
    expect(await refusals(h)).toMatchObject([{ userId: 'UPARTNER1', action: 'revoke', code: 'external-user', grantId: revoke.value, toolName: 'restart_service', channel: CHANNEL }]);
    // The grant still stands for our people.
    await h.slashCommand({ user: 'UCAROL', text: 'grants' });
    await waitFor(() => commandAnswers(h, 'UCAROL').filter((call) => String(call.args.text).includes('1 active grant')).length === 2, { message: 'the grant listed again' });
  });

  it('refuses a Revoke on App Home by a user of another organisation, before looking at their channels', async () => {
    const h = await harness();
    await grantedCall(h);
    // Not in the grant's channel either: the refusal names what matters most.
    h.slack.setChannelMembers(CHANNEL, ['UALICE', 'UBOB', 'UCAROL']);
    await postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope: appHomeOpenedEnvelope({ user: 'UBOB', teamId: TEAM_ID, botUserId: BOT_USER_ID }) });
    const bobs = await waitFor(() => h.slack.callsTo('views.publish').find((call) => call.args.user_id === 'UBOB'), { message: "Bob's Home" });
    const revoke = (bobs.args.view.blocks as any[]).find((block) => block.accessory?.action_id === 'countersign_home_revoke_grant').accessory;

    const payload = homeActionsPayload({ user: 'UPARTNER1', view: { id: 'VHOME0001', ...bobs.args.view }, teamId: TEAM_ID, actionId: revoke.action_id, value: revoke.value }) as { user: { team_id: string } };
    payload.user.team_id = PARTNER_TEAM;
    await postSlackInteraction({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, payload });
    const notice = await waitFor(() => h.slack.callsTo('views.publish').find((call) => call.args.user_id === 'UPARTNER1'), { message: "the partner's Home" });
    await h.settled();

    expect(JSON.stringify(notice.args.view.blocks)).toContain("not a member of this workspace's organisation");
    expect((await h.auditEvents()).map((event) => event.type)).not.toContain('grant-revoked');
    expect(await refusals(h)).toMatchObject([{ userId: 'UPARTNER1', action: 'revoke', code: 'external-user', grantId: revoke.value, channel: CHANNEL }]);
  });

  it("asks Slack once a minute which workspace a member typing /countersign belongs to, so a failing users.info does not refuse them meanwhile", async () => {
    const h = await harness();
    usersOfTwoOrganisations(h);

    await h.slashCommand({ user: 'UCAROL', text: 'pending' });
    await waitFor(() => commandAnswers(h, 'UCAROL').length === 1, { message: 'the answer to the first pending' });
    await h.slashCommand({ user: 'UCAROL', text: 'pending' });
    await waitFor(() => commandAnswers(h, 'UCAROL').length === 2, { message: 'the answer to the second pending' });
    expect(h.slack.callsTo('users.info').map((call) => call.args.user)).toEqual(['UCAROL']);

    // Slack failing (or rate-limiting) users.info now does not turn away a member it has just named.
    h.slack.failWhen('users.info', () => true, { error: 'ratelimited' });
    await h.slashCommand({ user: 'UCAROL', text: 'grants' });
    await waitFor(() => commandAnswers(h, 'UCAROL').length === 3, { message: 'the answer to grants' });
    await h.settled();

    expect(commandAnswers(h, 'UCAROL').map((call) => call.args.text)).toEqual([
      'No approval requests are waiting in this channel.',
      'No approval requests are waiting in this channel.',
      'No grants are active in this channel.',
    ]);
    expect(await refusals(h)).toEqual([]);
  });

  it('does not list grants or waiting requests to a user of another organisation, and says it could not check when users.info fails', async () => {
    const h = await harness();
    usersOfTwoOrganisations(h);
    await grantedCall(h);

    await h.slashCommand({ user: 'UPARTNER1', text: 'grants' });
    await waitFor(() => commandAnswers(h, 'UPARTNER1').length === 1, { message: 'the answer to grants' });
    await h.slashCommand({ user: 'UPARTNER1', text: 'pending' });
    await waitFor(() => commandAnswers(h, 'UPARTNER1').length === 2, { message: 'the answer to pending' });
    h.slack.failWhen('users.info', () => true, { error: 'fatal_error' });
    await h.slashCommand({ user: 'UCAROL', text: 'grants' });
    const unverified = await waitFor(() => commandAnswers(h, 'UCAROL')[0], { message: "Carol's answer" });
    await h.settled();

    expect(commandAnswers(h, 'UPARTNER1').map((call) => [call.args.text, call.args.blocks])).toEqual([
      [expect.stringContaining("not a member of this workspace's organisation"), undefined],
      [expect.stringContaining("not a member of this workspace's organisation"), undefined],
    ]);
    expect(unverified.args).toMatchObject({ text: expect.stringContaining('could not check') });
    expect(unverified.args.blocks).toBeUndefined();
    expect((await refusals(h)).map((event) => [event.userId, event.action, event.code, event.channel])).toEqual([
      ['UPARTNER1', 'list-grants', 'external-user', CHANNEL],
      ['UPARTNER1', 'list-pending', 'external-user', CHANNEL],
      ['UCAROL', 'list-grants', 'membership-unverified', CHANNEL],
    ]);
  });
});
