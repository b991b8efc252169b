import { describe, expect, it } from 'vitest';
import { appHomeOpenedEnvelope, appMentionEnvelope, homeActionsPayload, postSlackEvent, postSlackInteraction } from '../helpers/signed-request.js';
import { fillForm } from './fill-form.js';
import { BOT_USER_ID, CHANNEL, cardButtons, nextTs, SIGNING_SECRET, TEAM_ID, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

/** App Home: what waits for the viewer across channels, decided with the card's checks, through signed requests. */
const harness = useHarnesses();

const OTHER_CHANNEL = 'C0OTHER001';
const BOB_ONLY = `
policy:
  rules:
    - name: restarts
      tools: [restart_service]
      approvers: [UBOB]
`;

type PublishedView = { type: string; blocks: any[] };

/** Alice asks for a restart in another channel than the harness's own; returns the card. */
async function requestRestart(h: Harness, { channel = OTHER_CHANNEL, answer = 'Restarted.', service = 'worker', namespace = 'staging' } = {}) {
  h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service, namespace } }] }, { text: answer });
  const threadTs = nextTs();
  await postSlackEvent({
    url: h.eventsUrl,
    signingSecret: SIGNING_SECRET,
    envelope: appMentionEnvelope({ user: 'UALICE', text: `<@${BOT_USER_ID}> restart the worker`, channel, teamId: TEAM_ID, botUserId: BOT_USER_ID, ts: threadTs }),
  });
  const card = await waitFor(() => threadReplies(h, threadTs, channel).find((message) => cardButtons(message.blocks).length > 0), { message: 'the card' });
  return { card, threadTs, channel };
}

const publishesFor = (h: Harness, user: string) => h.slack.callsTo('views.publish').filter((call) => call.args.user_id === user);

/** Waits for the next Home view published for `user` after `action` (opening the tab, a click). */
async function nextHome(h: Harness, user: string, action: () => Promise<unknown>): Promise<PublishedView> {
  const before = publishesFor(h, user).length;
  await action();
  const call = await waitFor(() => publishesFor(h, user)[before], { message: `a Home view for ${user}` });
  return call.args.view as PublishedView;
}

const openHome = (h: Harness, user: string) =>
  nextHome(h, user, () => postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope: appHomeOpenedEnvelope({ user, teamId: TEAM_ID, botUserId: BOT_USER_ID }) }));

const clickHome = (h: Harness, user: string, view: PublishedView, button: { actionId: string; value: string }) =>
  nextHome(h, user, () => postSlackInteraction({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, payload: homeActionsPayload({ user, view: { id: 'VHOME0001', ...view }, teamId: TEAM_ID, ...button }) }));

/** Buttons in actions blocks and as section accessories (Revoke). */
const homeButtons = (view: PublishedView) => [...cardButtons(view.blocks), ...cardButtons(view.blocks.filter((block) => block.accessory).map((block) => ({ type: 'actions', elements: [block.accessory] })))];
const homeText = (view: PublishedView) => JSON.stringify(view.blocks);

describe('App Home', () => {
  it('lists an approval from another channel to the approver, who approves it there: the turn resumes once and the card updates', async () => {
    const h = await harness({ extraYaml: BOB_ONLY });
    const { card, threadTs, channel } = await requestRestart(h);

    const bobs = await openHome(h, 'UBOB');
    expect(bobs.type).toBe('home');
    expect(homeText(bobs)).toContain('restart_service');
    expect(homeText(bobs)).toContain(`<#${OTHER_CHANNEL}>`);
    const approve = homeButtons(bobs).find((button) => button.actionId === 'countersign_home_approve')!;
    expect(approve.value).toBe(cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!.value);
    // Edit, reasons and grants stay on the card, one click away.
    expect(homeButtons(bobs).map((button) => button.actionId)).toContain('countersign_home_open_card');

    const alices = await openHome(h, 'UALICE');
    expect(homeButtons(alices).map((button) => button.actionId)).not.toContain('countersign_home_approve');
    expect(homeText(alices)).toContain('Your requests (1)');

    const after = await clickHome(h, 'UBOB', bobs, approve);
    expect(homeText(after)).toContain('Approved');
    expect(homeButtons(after).map((button) => button.actionId)).not.toContain('countersign_home_approve');
    await waitFor(() => threadReplies(h, threadTs, channel).some((message) => message.text === 'Restarted.'), { message: 'the answer' });
    const updated = threadReplies(h, threadTs, channel).find((message) => message.ts === card.ts)!;
    expect(cardButtons(updated.blocks)).toEqual([]);
    expect(JSON.stringify(updated.blocks)).toContain('Approved by <@UBOB>');

    // A second click from the stale Home view is refused; the tool still ran once.
    const again = await clickHome(h, 'UBOB', bobs, approve);
    expect(homeText(again)).toMatch(/already/i);
    await h.settled();
    expect(h.invocations()).toHaveLength(1);
    expect(homeText(await openHome(h, 'UBOB'))).toMatch(/Approved\S* \*restart_service\*/);
  });

  it('neither lists nor lets decide a call to someone the policy does not name: a forged click changes nothing', async () => {
    const h = await harness({ extraYaml: BOB_ONLY });
    const { card, threadTs, channel } = await requestRestart(h);
    const carols = await openHome(h, 'UCAROL');
    expect(homeButtons(carols).filter((button) => button.actionId.startsWith('countersign_home_'))).toEqual([]);
    expect(homeText(carols)).toContain('Nothing waits for your approval');

    const forged = { actionId: 'countersign_home_approve', value: cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!.value };
    const refused = await clickHome(h, 'UCAROL', carols, forged);
    expect(homeText(refused)).toContain('Only <@UBOB> can approve this');
    await h.settled();
    expect(h.invocations()).toEqual([]);
    expect(cardButtons(threadReplies(h, threadTs, channel).find((message) => message.ts === card.ts)!.blocks).length).toBeGreaterThan(0);
    expect((await h.auditEvents()).some((event) => event.type === 'action-refused' && event.userId === 'UCAROL' && event.code === 'not-eligible')).toBe(true);
  });

  it("hides a channel's requests from people outside it, and refuses their clicks", async () => {
    const h = await harness();
    h.slack.setChannelMembers(OTHER_CHANNEL, ['UALICE', 'UBOB']);
    const { card } = await requestRestart(h);
    const approve = { actionId: 'countersign_home_approve', value: cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!.value };

    expect(homeButtons(await openHome(h, 'UBOB'))).toContainEqual(approve);
    const outsiders = await openHome(h, 'UDAVE');
    expect(homeText(outsiders)).not.toContain('restart_service');
    const refused = await clickHome(h, 'UDAVE', outsiders, approve);
    expect(homeText(refused)).toContain('You are not in the channel');
    await h.settled();
    expect(h.invocations()).toEqual([]);
    expect((await h.auditEvents()).some((event) => event.type === 'action-refused' && event.userId === 'UDAVE' && event.code === 'wrong-channel')).toBe(true);

    // When Slack will not say which channels someone is in (a scope missing), nothing is listed, and why.
    h.slack.failWhen('users.conversations', (call) => call.args.user === 'UERIN', { error: 'missing_scope' });
    const unknown = await openHome(h, 'UERIN');
    expect(homeText(unknown)).toContain('Could not read which channels you are in');
    expect(homeButtons(unknown).filter((button) => button.actionId === 'countersign_home_approve')).toEqual([]);
  });

  it('refuses an Approve of a version edited since the Home view was shown, and shows the new version to approve', async () => {
    const h = await harness({ extraYaml: 'policy:\n  rules:\n    - name: two people\n      tools: [restart_service]\n      required: 2\n' });
    const { card, threadTs } = await requestRestart(h, { channel: CHANNEL, answer: 'Restarted worker-2.' });
    const shown = await openHome(h, 'UCAROL');
    const staleApprove = homeButtons(shown).find((button) => button.actionId === 'countersign_home_approve')!;

    // Bob edits on the card: version 2, his approval counts (1 of 2).
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...cardButtons(card.blocks).find((button) => button.actionId === 'countersign_edit')! });
    const form = (await waitFor(() => h.slack.callsTo('views.open').at(-1), { message: 'the edit form' })).args.view;
    await h.submitView({ user: 'UBOB', view: form, values: fillForm(form, { Service: 'worker-2' }) });
    await waitFor(() => JSON.stringify(threadReplies(h, threadTs).find((message) => message.ts === card.ts)?.blocks).includes('Version 2'), { message: 'the edited card' });

    const refused = await clickHome(h, 'UCAROL', shown, staleApprove);
    expect(homeText(refused)).toContain('nothing changed');
    expect(homeText(refused)).toContain('version 2, edited by <@UBOB>');
    const current = homeButtons(refused).find((button) => button.actionId === 'countersign_home_approve')!;
    expect(current.value).not.toBe(staleApprove.value);
    expect(h.invocations()).toEqual([]);

    await clickHome(h, 'UCAROL', refused, current);
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted worker-2.'), { message: 'the answer' });
    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/worker-2', '-n', 'staging']]);
  });

  it('says when it cut an input and opens the whole of it, to people in the channel only', async () => {
    const h = await harness({ extraYaml: BOB_ONLY });
    h.slack.setChannelMembers(OTHER_CHANNEL, ['UALICE', 'UBOB']);
    // The model orders the keys: a long first value pushes the namespace past what Home shows.
    await requestRestart(h, { service: `cache-warmup-${'a'.repeat(700)}`, namespace: 'prod' });
    const bobs = await openHome(h, 'UBOB');
    expect(homeText(bobs)).not.toContain('\\"prod\\"');
    expect(homeText(bobs)).toMatch(/truncated, \d+ more characters/);
    const viewInput = homeButtons(bobs).find((button) => button.actionId === 'countersign_home_view_input')!;
    expect(viewInput).toBeDefined();

    const opened = h.slack.callsTo('views.open').length;
    await postSlackInteraction({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, payload: homeActionsPayload({ user: 'UBOB', view: { id: 'VHOME0001', ...bobs }, teamId: TEAM_ID, ...viewInput }) });
    const modal = (await waitFor(() => h.slack.callsTo('views.open')[opened], { message: 'the full input' })).args.view;
    expect(JSON.stringify(modal)).toContain('\\"namespace\\": \\"prod\\"');

    // Someone outside the request's channel cannot read it with a forged click.
    const refused = await clickHome(h, 'UDAVE', bobs, viewInput);
    expect(homeText(refused)).toContain('You are not in the channel');
    expect(h.slack.callsTo('views.open')).toHaveLength(opened + 1);
  });

  it("lists the viewer's grants across channels and revokes one; a Revoke from outside its channel is refused and audited", async () => {
    const h = await harness();
    const { card, threadTs, channel } = await requestRestart(h, { answer: 'granted' });
    const grant = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_grant')!;
    const opened = h.slack.callsTo('views.open').length;
    await postSlackInteraction({
      url: h.eventsUrl,
      signingSecret: SIGNING_SECRET,
      payload: (await import('../helpers/signed-request.js')).blockActionsPayload({ user: 'UBOB', channel, messageTs: card.ts, threadTs, teamId: TEAM_ID, ...grant }),
    });
    const form = (await waitFor(() => h.slack.callsTo('views.open')[opened], { message: 'grant form' })).args.view;
    const option = (value: string) => ({ text: { type: 'plain_text', text: value }, value });
    await h.submitView({
      user: 'UBOB',
      view: form,
      values: {
        scope: { value: { type: 'radio_buttons', selected_option: option('channel') } },
        duration: { value: { type: 'static_select', selected_option: option('4') } },
        identical: { value: { type: 'checkboxes', selected_options: [] } },
      },
    });
    await waitFor(() => threadReplies(h, threadTs, channel).some((message) => message.text === 'granted'), { message: 'the answer' });

    expect(homeText(await openHome(h, 'UCAROL'))).toContain('You have no active grants');
    const bobs = await openHome(h, 'UBOB');
    expect(homeText(bobs)).toContain(`\`restart_service\` in <#${OTHER_CHANNEL}>`);
    const revoke = homeButtons(bobs).find((button) => button.actionId === 'countersign_home_revoke_grant')!;
    // Someone outside the grant's channel cannot revoke it with a forged click.
    h.slack.setChannelMembers(OTHER_CHANNEL, ['UALICE', 'UBOB']);
    expect(homeText(await clickHome(h, 'UDAVE', bobs, revoke))).toContain('You are not in the channel');
    // Like every refused Revoke, it leaves an action-refused record.
    const refusals = (await h.auditEvents()).filter((event) => event.type === 'action-refused' && event.userId === 'UDAVE');
    expect(refusals).toMatchObject([{ action: 'revoke', code: 'wrong-channel', grantId: revoke.value, toolName: 'restart_service', teamId: TEAM_ID }]);
    // Channels Slack could not list are not taken for membership, and that refusal says so.
    h.slack.failWhen('users.conversations', (call) => call.args.user === 'UERIN', { error: 'missing_scope' });
    expect(homeText(await clickHome(h, 'UERIN', bobs, revoke))).toContain('Could not check which channels you are in');
    expect((await h.auditEvents()).filter((event) => event.type === 'action-refused' && event.userId === 'UERIN')).toMatchObject([{ action: 'revoke', code: 'channels-unknown' }]);
    const after = await clickHome(h, 'UBOB', bobs, revoke);
    expect(homeText(after)).toContain('Revoked the grant');
    expect(homeText(after)).toContain('You have no active grants');
    expect((await h.auditEvents()).filter((event) => event.type === 'grant-revoked')).toHaveLength(1);
  });
});
