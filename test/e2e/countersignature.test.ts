import { describe, expect, it } from 'vitest';
import { encodeCallFormMetadata } from '../../src/slack/blocks/action-ids.js';
import { conversationOf } from '../helpers/fake-openai.js';
import { blockActionsPayload, postSlackInteraction, viewSubmissionPayload } from '../helpers/signed-request.js';
import { fillForm } from './fill-form.js';
import { CHANNEL, SIGNING_SECRET, TEAM_ID, cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

/**
 * The eight ways the countersignature used to break, each tried end to end through signed Slack
 * requests, as a hostile requester or a careless approver would: each must now be refused (or
 * counted correctly), privately explained, and leave nothing run that the policy did not allow.
 */
const harness = useHarnesses();

const QUORUM = `
policy:
  rules:
    - name: two people
      tools: [restart_service]
      approvers: [channel]
      required: 2
      allowSelfApproval: false
`;

const ONE_OF_US = `
policy:
  rules:
    - name: bob or carol
      tools: [restart_service]
      approvers: [U0BOB, U0CAROL]
      allowSelfApproval: false
`;

const ephemeralsFor = (h: Harness, user: string) => h.slack.callsTo('chat.postEphemeral').filter((call) => call.args.user === user).map((call) => String(call.args.text));

async function ephemeral(h: Harness, user: string, containing: string): Promise<string> {
  return waitFor(() => ephemeralsFor(h, user).find((text) => text.includes(containing)), { message: `a private "${containing}" for ${user}` });
}

/** The model asks for a restart; returns the card and ways to click it and read it again. */
async function cardFor(h: Harness, { requester = 'UALICE', args = { service: 'worker', namespace: 'staging' }, then = [] as string[], threadTs = nextTs() } = {}) {
  h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: args }] }, ...then.map((text) => ({ text })));
  await h.mention({ user: requester, text: 'restart it', ts: threadTs });
  const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
  const current = () => h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
  const button = (actionId: string, from = current()) => cardButtons(from.blocks).find((candidate) => candidate.actionId === actionId)!;
  const click = (user: string, actionId: string, from = current()) => h.click({ user, cardTs: card.ts, threadTs, ...button(actionId, from) });
  return { threadTs, card, current, button, click };
}

async function editTo(h: Harness, card: Awaited<ReturnType<typeof cardFor>>, user: string, values: Record<string, string>) {
  const opened = h.slack.callsTo('views.open').length;
  await card.click(user, 'countersign_edit');
  const view = (await waitFor(() => h.slack.callsTo('views.open')[opened], { message: 'edit form' })).args.view;
  return h.submitView({ user, view, values: fillForm(view, values) });
}

describe('1. a quorum counts approvals of one exact input', () => {
  it('approve, then someone edits: the edit needs a full quorum of its own, and only it runs', async () => {
    const h = await harness({ extraYaml: QUORUM });
    const card = await cardFor(h, { then: ['Restarted payments-db.'] });
    await card.click('UBOB', 'countersign_approve');
    await waitFor(() => JSON.stringify(card.current().blocks).includes('1 of 2 approvals'), { message: '1 of 2' });
    expect((await editTo(h, card, 'UCAROL', { Service: 'payments-db' })).status).toBe(200);
    const edited = await waitFor(() => (JSON.stringify(card.current().blocks).includes('Version 2') ? card.current() : undefined), { message: 'version 2 on the card' });
    const text = JSON.stringify(edited.blocks);
    expect(text).toContain('1 of 2 approvals: <@UCAROL>');
    expect(text).toContain('Approvals of earlier versions (<@UBOB>) do not count');
    await h.settled();
    expect(h.invocations()).toEqual([]);

    await card.click('UDAVE', 'countersign_approve');
    await waitFor(() => threadReplies(h, card.threadTs).some((message) => message.text === 'Restarted payments-db.'), { message: 'answer' });
    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/payments-db', '-n', 'staging']]);
  });

  it('edit, then someone clicks Approve on the card they saw before the edit: refused, and the original never runs', async () => {
    const h = await harness({ extraYaml: QUORUM });
    const card = await cardFor(h, { then: ['Restarted safe-canary.'] });
    const before = card.current();
    expect((await editTo(h, card, 'UBOB', { Service: 'safe-canary' })).status).toBe(200);
    await waitFor(() => JSON.stringify(card.current().blocks).includes('Version 2'), { message: 'version 2' });

    await card.click('UCAROL', 'countersign_approve', before);
    expect(await ephemeral(h, 'UCAROL', 'changed since you looked')).toContain('nothing changed');
    await h.settled();
    expect(h.invocations()).toEqual([]);

    await card.click('UCAROL', 'countersign_approve');
    await waitFor(() => threadReplies(h, card.threadTs).some((message) => message.text === 'Restarted safe-canary.'), { message: 'answer' });
    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/safe-canary', '-n', 'staging']]);
    const result = conversationOf(h.openai.requests[1]!).find((message) => message.role === 'tool')?.text ?? '';
    expect(result).toContain('service: \\"worker\\" → \\"safe-canary\\"');
  });
});

describe('2. a grant is authorised by the server, not by the card', () => {
  it('refuses a forged "Approve & allow" on a call that needs two approvers, and saves no grant', async () => {
    const h = await harness({ extraYaml: QUORUM });
    const card = await cardFor(h);
    const approve = card.button('countersign_approve');
    expect(cardButtons(card.current().blocks).map((button) => button.actionId)).not.toContain('countersign_grant');

    // The grant button's id with the Approve button's value: no form opens.
    await h.click({ user: 'UBOB', cardTs: card.card.ts, threadTs: card.threadTs, actionId: 'countersign_grant', value: approve.value });
    await ephemeral(h, 'UBOB', 'needs several approvers');
    await h.settled();
    expect(h.slack.callsTo('views.open')).toHaveLength(0);

    // A forged form submission for it is refused in the form and records nothing.
    const [stepId, approvalId] = approve.value.split(':');
    const forged = await postSlackInteraction({
      url: h.eventsUrl,
      signingSecret: SIGNING_SECRET,
      payload: viewSubmissionPayload({
        user: 'UBOB',
        teamId: TEAM_ID,
        callbackId: 'countersign_grant',
        privateMetadata: encodeCallFormMetadata({ stepId: stepId!, approvalId: approvalId!, version: 0, channel: CHANNEL }),
        values: {
          scope: { value: { type: 'radio_buttons', selected_option: { text: { type: 'plain_text', text: 'c' }, value: 'channel' } } },
          duration: { value: { type: 'static_select', selected_option: { text: { type: 'plain_text', text: '24' }, value: '24' } } },
        },
      }),
    });
    const body = (await forged.json()) as { response_action: string; errors: Record<string, string> };
    expect(body.response_action).toBe('errors');
    expect(Object.values(body.errors).join(' ')).toContain('cannot be allowed ahead of time');
    await h.settled();
    expect(JSON.stringify(card.current().blocks)).not.toContain('1 of 2 approvals');
    expect((await h.auditEvents()).filter((event) => event.type === 'grant-created')).toEqual([]);

    // The requester's next call still waits for people.
    const next = await cardFor(h);
    expect(next.card).toBeDefined();
    await h.settled();
    expect(h.invocations()).toEqual([]);
  });
});

describe("3. an approver's grant never covers their own requests", () => {
  it('lets Alice\'s later calls run on Bob\'s grant, but not Bob\'s own', async () => {
    const h = await harness({ extraYaml: ONE_OF_US });
    const first = await cardFor(h, { then: ['Restarted for Alice.'] });
    const opened = h.slack.callsTo('views.open').length;
    await first.click('U0BOB', 'countersign_grant');
    const view = (await waitFor(() => h.slack.callsTo('views.open')[opened], { message: 'grant form' })).args.view;
    const option = (value: string) => ({ text: { type: 'plain_text', text: value }, value });
    await h.submitView({
      user: 'U0BOB',
      view,
      values: { scope: { value: { type: 'radio_buttons', selected_option: option('channel') } }, duration: { value: { type: 'static_select', selected_option: option('4') } } },
    });
    await waitFor(() => threadReplies(h, first.threadTs).some((message) => message.text === 'Restarted for Alice.'), { message: 'first answer' });

    // Bob asks for the same thing himself: his own grant does not stand in for a second person.
    const bobs = await cardFor(h, { requester: 'U0BOB' });
    expect(JSON.stringify(bobs.current().blocks)).toContain('Requested by <@U0BOB>');
    expect(h.invocations()).toHaveLength(1);

    // Alice's next call in the channel is covered.
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'Again, on the grant.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'again', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Again, on the grant.'), { message: 'covered answer' });
    expect(h.invocations()).toHaveLength(2);
  });
});

describe('4. Try again keeps the requester', () => {
  it('refuses Try again from anyone but the requester, and the retried turn is still theirs', async () => {
    const h = await harness({ extraYaml: ONE_OF_US });
    h.openai.enqueue({ error: { status: 400, message: 'bad request' } });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart it', ts: threadTs });
    const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('could not finish')), { message: 'failure notice' });
    const retry = cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry')!;

    await h.click({ user: 'U0BOB', cardTs: notice.ts, threadTs, ...retry });
    expect(await ephemeral(h, 'U0BOB', 'Only <@UALICE>, who asked, can try this again')).toBeDefined();
    expect(h.openai.requests).toHaveLength(1);

    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] });
    await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...retry });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).some((button) => button.actionId === 'countersign_approve')), { message: 'card after retry' });
    expect(JSON.stringify(card.blocks)).toContain('Requested by <@UALICE>');
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await h.click({ user: 'UALICE', cardTs: card.ts, threadTs, ...approve });
    await ephemeral(h, 'UALICE', 'You asked for this, so someone else must approve it');
    await h.settled();
    expect(h.invocations()).toEqual([]);
  });
});

describe('5. only the requester closes their question', () => {
  it('refuses a decline sent by someone else on the question, and tells the model nothing', async () => {
    const h = await harness();
    h.openai.enqueue({ toolCalls: [{ name: 'ask_user', arguments: { question: 'Which region?', options: ['eu', 'us'] } }] }, { text: 'Fine, not asking.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart it somewhere', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'question card' });
    const value = cardButtons(card.blocks)[0]!.value;

    await h.click({ user: 'UMALLORY', cardTs: card.ts, threadTs, actionId: 'countersign_deny', value });
    await ephemeral(h, 'UMALLORY', 'Only <@UALICE> can decline this question');
    expect(h.openai.requests).toHaveLength(1);
    expect(JSON.stringify(h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!.blocks)).toContain('countersign_answer_0');

    await h.click({ user: 'UALICE', cardTs: card.ts, threadTs, actionId: 'countersign_deny', value });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Fine, not asking.'), { message: 'answer' });
    expect(conversationOf(h.openai.requests[1]!).find((message) => message.role === 'tool')?.text).toContain('Declined by <@UALICE>');
  });
});

describe('6. expiry is enforced by the click, not only by the sweeper', () => {
  it('refuses an Approve that arrives after the expiry, before any sweep, closes the card and runs nothing', async () => {
    const clock = { now: Date.now() };
    const h = await harness({ now: () => clock.now, sweepIntervalMs: 3_600_000, extraYaml: 'policy:\n  rules:\n    - tools: [restart_service]\n      expiry: 1m\n' });
    const card = await cardFor(h);
    clock.now += 61_000;
    await card.click('UBOB', 'countersign_approve');
    await ephemeral(h, 'UBOB', 'This request expired before you acted');
    await waitFor(() => JSON.stringify(card.current().blocks).includes('Expired without a decision'), { message: 'the card marked expired' });
    await waitFor(() => threadReplies(h, card.threadTs).some((message) => message.text.includes('expired without a decision, so nothing was run')), { message: 'expiry notice' });
    await h.settled();
    expect(h.invocations()).toEqual([]);
  });
});

describe("7. a click's workspace and channel must be the step's", () => {
  it('refuses a signed click from another workspace or channel that names a real step', async () => {
    const h = await harness();
    const card = await cardFor(h, { then: ['Restarted.'] });
    const { value, actionId } = card.button('countersign_approve');
    const forge = (overrides: { teamId?: string; channel?: string }) =>
      postSlackInteraction({
        url: h.eventsUrl,
        signingSecret: SIGNING_SECRET,
        payload: blockActionsPayload({ user: 'UBOB', channel: overrides.channel ?? CHANNEL, messageTs: card.card.ts, threadTs: card.threadTs, actionId, value, teamId: overrides.teamId ?? TEAM_ID }),
      });
    await forge({ teamId: 'T0ELSEWHERE' });
    await ephemeral(h, 'UBOB', 'another Slack workspace');
    await forge({ channel: 'C0ELSEWHERE' });
    await ephemeral(h, 'UBOB', 'another channel');
    await h.settled();
    expect(JSON.stringify(card.current().blocks)).toBe(JSON.stringify(card.card.blocks));
    expect(h.invocations()).toEqual([]);
    const refused = (await h.auditEvents()).filter((event) => event.type === 'action-refused');
    expect(refused.map((event) => (event.type === 'action-refused' ? event.code : ''))).toEqual(['wrong-workspace', 'wrong-channel']);

    await card.click('UBOB', 'countersign_approve');
    await waitFor(() => threadReplies(h, card.threadTs).some((message) => message.text === 'Restarted.'), { message: 'answer' });
    expect(h.invocations()).toHaveLength(1);
  });
});

describe('8. the model notifies only people already in the thread', () => {
  it.each(['update', 'native'])('in %s mode, an answer naming Alice (who asked) notifies her, and names an outsider as plain text', async (mode) => {
    const h = await harness({ environment: { SLACK_STREAMING: mode } });
    // Slow enough that the answer streams (one complete sooner is posted whole).
    h.openai.enqueue({ text: 'Done, <@UALICE>. I also told <@U0MALLORY|mallory> and <@W0EVE> about it.', deltaDelayMs: 40 });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart it and tell the others', ts: threadTs });
    const answer = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('about it')), { message: 'answer' });
    if (mode === 'native') expect(h.slack.callsTo('chat.startStream')).not.toHaveLength(0);
    expect(answer.text).toContain('Done, <@UALICE>.');
    expect(answer.text).toContain('I also told @\u200Bmallory and @\u200BW0EVE about it.');
    // Nothing sent to Slack, at any point of the answer, mentioned the outsiders.
    const sent = h.slack.calls.filter((call) => call.method.startsWith('chat.')).map((call) => JSON.stringify(call.args));
    for (const args of sent) expect(args).not.toMatch(/<@(?:U0MALLORY|W0EVE)/);
  });
});
