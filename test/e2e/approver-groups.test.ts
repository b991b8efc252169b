import { describe, expect, it } from 'vitest';
import { SLACK_RETRY_CONFIG } from '../../src/slack/create-slack-app.js';
import { conversationOf, type ScriptedReply } from '../helpers/fake-openai.js';
import { blockActionsPayload, postSlackEvent, postSlackInteraction } from '../helpers/signed-request.js';
import { CHANNEL, SIGNING_SECRET, TEAM_ID, cardButtons, nextTs, startHarness, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();

const SRE_AND_LEAD = `
policy:
  rules:
    - name: sre and lead
      tools: [restart_service]
      approvers: [group:S0SRE, U0LEAD]
      required: 2
`;

const SRE_ONLY = `
policy:
  rules:
    - name: sre
      tools: [restart_service]
      approvers: [group:S0SRE]
`;

const WAIT_NOTICE = /could not check who is in the user group S0SRE/;

/**
 * The production policy (each failed usergroups.users.list tried twice more) with its waits cut
 * from 300 ms and 600 ms to 10 ms and 20 ms: every failure still costs the same three calls.
 */
const QUICK_SLACK_RETRIES = { ...SLACK_RETRY_CONFIG, minTimeout: 10, maxTimeout: 20 };

/** The bot's clock, moved ahead by the test: the recovery sweep then sees the decided step as that long ago. */
function movableClock() {
  let aheadMs = 0;
  return { now: () => Date.now() + aheadMs, moveTo: (ms: number) => (aheadMs = ms) };
}

/** `afterResume`: what the model says once the approved call's turn resumes (an answer, or more calls). */
async function pausedCall(h: Harness, afterResume: string | ScriptedReply) {
  h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, typeof afterResume === 'string' ? { text: afterResume } : afterResume);
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
  const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
  const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
  const cardText = () => JSON.stringify(h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)?.blocks);
  const clickVia = (via: Harness, user: string) =>
    postSlackInteraction({ url: via.eventsUrl, signingSecret: SIGNING_SECRET, payload: blockActionsPayload({ user, channel: CHANNEL, messageTs: card.ts, threadTs, ...approve, teamId: TEAM_ID }) });
  return { threadTs, card, cardText, clickVia };
}

/**
 * Bob (in @sre, read fine) approves through one replica; Slack's Tier-2 usergroups.users.list then
 * fails with 503s, and the lead (named by id) approves through the other replica, which resumes the
 * turn and cannot check that Bob is still in @sre.
 */
async function quorumReachedWhileSlackFails(clock: ReturnType<typeof movableClock>, afterResume: string | ScriptedReply = 'Restarted.') {
  const a = await startHarness({ extraYaml: SRE_AND_LEAD, now: clock.now, sweepIntervalMs: 100, slackRetryConfig: QUICK_SLACK_RETRIES });
  const b = await a.startReplica();
  a.slack.setUsergroupUsers('S0SRE', ['UBOB']);
  const call = await pausedCall(a, afterResume);
  await call.clickVia(a, 'UBOB');
  await waitFor(() => call.cardText().includes('1 of 2'), { message: '1 of 2' });
  a.slack.failWhen('usergroups.users.list', () => true, { status: 503 });
  await call.clickVia(b, 'U0LEAD');
  await waitFor(() => call.cardText().includes('Approved by <@UBOB> and <@U0LEAD>'), { message: 'the quorum on the card' });
  // The resume tried, could not read @sre and left the step decided: nothing runs, nobody is blamed.
  await a.settled();
  return { a, b, call };
}

const notices = (h: Harness, threadTs: string) => threadReplies(h, threadTs).filter((message) => WAIT_NOTICE.test(message.text ?? ''));
const refusals = async (h: Harness) => (await h.auditEvents()).filter((event) => event.type === 'action-refused');

describe('approving groups that Slack cannot read when the turn resumes', () => {
  it('a brief usergroups.users.list failure delays the approved call instead of denying it', async () => {
    const clock = movableClock();
    const { a, b, call } = await quorumReachedWhileSlackFails(clock);
    try {
      expect({ invocations: a.invocations(), modelRequests: a.openai.requests.length, refusals: await refusals(a) }).toEqual({ invocations: [], modelRequests: 1, refusals: [] });

      // 40 s later Slack still fails: the sweep's retry cannot read @sre either, and the thread is told once.
      clock.moveTo(40_000);
      await waitFor(() => notices(a, call.threadTs).length > 0, { message: 'the wait notice' });
      // Slack answers again; the next retry reads @sre (Bob is still in it) and the call runs.
      a.slack.failWhen('usergroups.users.list', undefined);
      clock.moveTo(80_000);
      await waitFor(() => threadReplies(a, call.threadTs).some((message) => message.text === 'Restarted.'), { timeoutMs: 10_000, message: 'the answer' });
      await a.settled();

      const toolResult = conversationOf(a.openai.requests.at(-1)!).find((message) => message.role === 'tool')?.text ?? '';
      expect({ invocations: a.invocations(), notices: notices(a, call.threadTs).length, refusals: await refusals(a) }).toEqual({
        invocations: [['rollout', 'restart', 'deployment/worker', '-n', 'prod']],
        notices: 1,
        refusals: [],
      });
      expect(toolResult).not.toMatch(/Declined|human decision/);
      expect(call.cardText()).toContain('Approved by <@UBOB> and <@U0LEAD>');
    } finally {
      await b.stop();
      await a.stop();
    }
  });

  it('gives up after minutes: the call is closed by countersign as an error, not as the approvers’ denial', async () => {
    const clock = movableClock();
    const { a, b, call } = await quorumReachedWhileSlackFails(clock);
    try {
      a.openai.enqueue({ text: 'Slack did not answer; nothing ran.' });
      clock.moveTo(40_000);
      await waitFor(() => notices(a, call.threadTs).length > 0, { message: 'the wait notice' });
      // Slack still fails five minutes after the quorum: the wait ends.
      clock.moveTo(6 * 60_000);
      await waitFor(() => a.openai.requests.length === 2, { timeoutMs: 10_000, message: 'the model told' });
      await waitFor(() => call.cardText().includes('Not run'), { message: 'the card updated' });
      await a.settled();

      const toolResult = conversationOf(a.openai.requests.at(-1)!).find((message) => message.role === 'tool')?.text ?? '';
      expect(a.invocations()).toEqual([]);
      expect(toolResult).toContain('Not run: could not check who is in the user group S0SRE');
      expect(toolResult).toContain('This was an error, not a decision');
      expect(toolResult).not.toMatch(/Declined|human decision|UBOB/);
      expect(call.cardText()).not.toContain('Approved by');
      expect(call.cardText()).not.toContain('Denied by');
      expect((await refusals(a)).map((event) => ({ userId: event.userId, code: 'code' in event ? event.code : undefined }))).toEqual([{ userId: 'countersign', code: 'groups-unresolved' }]);
      expect(notices(a, call.threadTs)).toHaveLength(1);
    } finally {
      await b.stop();
      await a.stop();
    }
  });
});

describe('a new message while the approved call waits for its groups', () => {
  it('closes the call at once, as an error, before the message is answered', async () => {
    const clock = movableClock();
    const { a, b, call } = await quorumReachedWhileSlackFails(clock);
    try {
      a.openai.enqueue({ text: 'Nothing ran; the restart was not confirmed.' });
      await a.threadMessage({ user: 'UALICE', text: 'what happened?', threadTs: call.threadTs });
      await waitFor(() => threadReplies(a, call.threadTs).some((message) => message.text === 'Nothing ran; the restart was not confirmed.'), { message: 'the answer' });
      await a.settled();
      const toolResult = conversationOf(a.openai.requests.at(-1)!).find((message) => message.role === 'tool')?.text ?? '';
      expect(a.invocations()).toEqual([]);
      expect(toolResult).toContain('Not run: could not check who is in the user group S0SRE');
      expect(toolResult).not.toMatch(/Declined|human decision/);
      expect(call.cardText()).toContain('Not run');
    } finally {
      await b.stop();
      await a.stop();
    }
  });

  it('closes the card the resumed turn asks for too, so the call cannot run after the model was told it did not', async () => {
    const clock = movableClock();
    // Resumed inside the message's handling, the turn asks to restart the api as well.
    const { a, b, call } = await quorumReachedWhileSlackFails(clock, { toolCalls: [{ name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } }] });
    try {
      a.openai.enqueue({ text: 'Nothing ran.' });
      await a.threadMessage({ user: 'UALICE', text: 'what happened?', threadTs: call.threadTs });
      await waitFor(() => threadReplies(a, call.threadTs).some((message) => message.text === 'Nothing ran.'), { message: 'the answer' });
      await a.settled();
      a.slack.failWhen('usergroups.users.list', undefined);

      const apiCard = a.slack.callsTo('chat.postMessage').find((posted) => JSON.stringify(posted.args.blocks ?? []).includes('\\"api\\"'));
      const apiCardNow = threadReplies(a, call.threadTs).find((message) => message.ts !== call.card.ts && JSON.stringify(message.blocks ?? []).includes('restart_service'));
      expect(apiCard, 'the resumed turn posted a card for the api restart').toBeDefined();
      expect(cardButtons(apiCardNow?.blocks)).toEqual([]);
      expect(JSON.stringify(apiCardNow?.blocks)).toMatch(/superseded by a newer message/);

      // The model was told the api restart was closed for Alice's message, once, not that it was interrupted.
      const toolResults = conversationOf(a.openai.requests.at(-1)!).filter((message) => message.role === 'tool');
      expect(toolResults.map((message) => message.toolCallId)).toEqual(['call_1', 'call_2']);
      expect(toolResults[1]?.text).toContain('sent a newer message before this call was decided');

      // An approval click on the api card as it was posted changes nothing.
      const approve = cardButtons(apiCard?.args.blocks).find((button) => button.actionId === 'countersign_approve')!;
      await a.click({ user: 'U0LEAD', cardTs: apiCardNow!.ts, threadTs: call.threadTs, ...approve });
      await a.slack.waitForCall('chat.postEphemeral', (posted) => String(posted.args.text).includes('newer message'));
      await a.settled();
      expect({ invocations: a.invocations(), modelRequests: a.openai.requests.length }).toEqual({ invocations: [], modelRequests: 3 });
    } finally {
      await b.stop();
      await a.stop();
    }
  });
});

describe('someone removed from the approving group', () => {
  it('can no longer approve: the resume reads the group fresh, past the five-minute cache', async () => {
    const h = await harness({ extraYaml: SRE_ONLY });
    h.slack.setUsergroupUsers('S0SRE', ['UBOB', 'UCAROL']);
    const first = await pausedCall(h, 'Restarted once.');
    await first.clickVia(h, 'UCAROL');
    await waitFor(() => threadReplies(h, first.threadTs).some((message) => message.text === 'Restarted once.'), { message: 'first answer' });

    // Bob leaves the on-call group; Slack's event about it is lost, so the click reads the cache.
    h.slack.setUsergroupUsers('S0SRE', ['UCAROL']);
    const second = await pausedCall(h, 'Restarted twice.');
    await second.clickVia(h, 'UBOB');
    await h.settled();
    expect(h.invocations()).toHaveLength(1);
  });

  it('is refused at the click once Slack says the group changed (subteam_members_changed)', async () => {
    const h = await harness({ extraYaml: SRE_ONLY });
    h.slack.setUsergroupUsers('S0SRE', ['UBOB', 'UCAROL']);
    const first = await pausedCall(h, 'Restarted once.');
    await first.clickVia(h, 'UCAROL');
    await waitFor(() => threadReplies(h, first.threadTs).some((message) => message.text === 'Restarted once.'), { message: 'first answer' });

    h.slack.setUsergroupUsers('S0SRE', ['UCAROL']);
    const event = { type: 'subteam_members_changed', subteam_id: 'S0SRE', team_id: TEAM_ID, date_previous_update: 1, date_update: 2, removed_users: ['UBOB'], removed_users_count: 1, event_ts: '2.000001' };
    const envelope = { token: 'legacy', team_id: TEAM_ID, api_app_id: 'A0COUNTERSIGN', event, type: 'event_callback', event_id: `Ev${nextTs().replace('.', '')}`, event_time: 2, authorizations: [] };
    expect((await postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope })).status).toBe(200);
    await h.settled();

    const second = await pausedCall(h, 'Restarted twice.');
    await second.clickVia(h, 'UBOB');
    const refusal = await waitFor(() => h.slack.callsTo('chat.postEphemeral').map((call) => String(call.args.text))[0], { message: 'answer to the click' });
    await h.settled();
    expect(refusal).toContain('Only members of <!subteam^S0SRE>');
    expect(h.invocations()).toHaveLength(1);
  });
});

describe('who can decide: channel approvers and notify.thread: false', () => {
  it('is refused at start-up, naming the field, since no card would have a button they could use', async () => {
    const config = `
policy:
  rules:
    - name: decided in approvals
      tools: [restart_service]
      notify: { thread: false, channels: [C0APPROVALS] }
`;
    await expect(harness({ extraYaml: config })).rejects.toThrow(/rules\[0\]\.notify\.thread.*includes channel/s);
  });
});
