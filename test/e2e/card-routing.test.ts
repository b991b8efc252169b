import { describe, expect, it } from 'vitest';
import { directMessageChannel } from '../../src/sandbox/emulator/web-api/workspace-methods.js';
import { blockActionsPayload, postSlackInteraction } from '../helpers/signed-request.js';
import { fillForm } from './fill-form.js';
import { CHANNEL, SIGNING_SECRET, TEAM_ID, cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();

const APPROVALS = 'C0APPROVALS';
const ELSEWHERE = 'C0RANDOM01';

const ROUTED = `
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      approvers: [U0OPS1, U0OPS2]
      notify: { channels: [${APPROVALS}], dmApprovers: true }
`;

const OPEN_TO_CHANNEL = `
policy:
  rules:
    - tools: [restart_service]
      notify: { channels: [${APPROVALS}] }
`;

const restart = { name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } };
const text = (message: { blocks?: unknown[] } | undefined) => JSON.stringify(message?.blocks ?? []);

/** Pauses a turn on a routed card and waits until its copies are recorded (the thread's card names them). */
async function pausedOnRoutedCard(h: Harness, answer = 'Restarted.') {
  h.openai.enqueue({ toolCalls: [restart] }, { text: answer });
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
  const threadCard = await waitFor(() => threadReplies(h, threadTs).find((message) => /waiting for approval in/i.test(text(message))), { message: 'thread card naming its copies' });
  const copyIn = (channel: string) => h.slack.messages(channel).find((message) => text(message).includes('Requested in'));
  const currentThreadCard = () => h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === threadCard.ts)!;
  return { threadTs, threadCard, copyIn, currentThreadCard };
}

/** A signed click on a card in any channel (the harness's own `click` is always in the thread's channel). */
function clickIn(h: Harness, options: { channel: string; user: string; messageTs: string; actionId: string; value: string }) {
  return postSlackInteraction({
    url: h.eventsUrl,
    signingSecret: SIGNING_SECRET,
    payload: blockActionsPayload({ user: options.user, channel: options.channel, messageTs: options.messageTs, actionId: options.actionId, value: options.value, teamId: TEAM_ID }),
  });
}

const approveButton = (message: { blocks?: any[] }) => cardButtons(message.blocks).find((button) => button.actionId === 'countersign_approve')!;
const ephemerals = (h: Harness) => h.slack.callsTo('chat.postEphemeral').map((call) => ({ user: String(call.args.user), channel: String(call.args.channel), text: String(call.args.text) }));

describe('where the card goes', () => {
  it('posts copies to #approvals and to each named approver, linked both ways; a decision on one copy shows on all and runs once', async () => {
    const h = await harness({ extraYaml: ROUTED });
    const { threadTs, threadCard, copyIn, currentThreadCard } = await pausedOnRoutedCard(h);
    const dmOps1 = directMessageChannel('U0OPS1');
    const dmOps2 = directMessageChannel('U0OPS2');
    const copies = [APPROVALS, dmOps1, dmOps2].map((channel) => copyIn(channel)!);
    for (const copy of copies) {
      expect(text(copy)).toMatch(new RegExp(`Requested in <#${CHANNEL}> · <https?://[^|]+/archives/${CHANNEL}/p${threadCard.ts.replace('.', '')}\\|open the thread>`));
      expect(cardButtons(copy.blocks).length).toBeGreaterThan(0);
    }
    expect(text(threadCard)).toContain(`Also waiting for approval in <#${APPROVALS}> (<`);
    expect(text(threadCard)).toContain(`/archives/${APPROVALS}/p${copies[0]!.ts.replace('.', '')}|open>) and a DM to <@U0OPS1>, <@U0OPS2>`);

    await clickIn(h, { channel: APPROVALS, user: 'U0OPS1', messageTs: copies[0]!.ts, ...approveButton(copies[0]!) });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted.'), { message: 'answer' });
    await h.settled();

    for (const card of [currentThreadCard(), ...[APPROVALS, dmOps1, dmOps2].map((channel) => copyIn(channel)!)]) {
      expect(text(card)).toContain('Approved by <@U0OPS1>');
      expect(cardButtons(card.blocks)).toEqual([]);
    }
    expect(h.invocations()).toHaveLength(1);
    expect(h.openai.requests).toHaveLength(2);
  });

  it('counts a decision once when two copies are clicked at the same time', async () => {
    const h = await harness({ extraYaml: ROUTED });
    const { threadTs, copyIn } = await pausedOnRoutedCard(h);
    const inApprovals = copyIn(APPROVALS)!;
    const inDm = copyIn(directMessageChannel('U0OPS2'))!;
    await Promise.all([
      clickIn(h, { channel: APPROVALS, user: 'U0OPS1', messageTs: inApprovals.ts, ...approveButton(inApprovals) }),
      clickIn(h, { channel: directMessageChannel('U0OPS2'), user: 'U0OPS2', messageTs: inDm.ts, ...approveButton(inDm) }),
    ]);
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted.'), { message: 'answer' });
    await waitFor(() => ephemerals(h).some((message) => message.text.startsWith('Already approved by')), { message: 'the late click told' });
    await h.settled();
    expect(h.invocations()).toHaveLength(1);
    const decisions = (await h.auditEvents()).filter((event) => event.type === 'decision');
    expect(decisions).toHaveLength(1);
  });

  it('keeps updating the other copies when Slack refuses to update one', async () => {
    const h = await harness({ extraYaml: ROUTED });
    const { threadTs, copyIn, currentThreadCard } = await pausedOnRoutedCard(h);
    h.slack.failWhen('chat.update', (call) => call.args.channel === APPROVALS, { error: 'channel_not_found' });
    const inDm = copyIn(directMessageChannel('U0OPS2'))!;
    await clickIn(h, { channel: directMessageChannel('U0OPS2'), user: 'U0OPS2', messageTs: inDm.ts, ...approveButton(inDm) });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted.'), { message: 'answer' });
    await h.settled();
    for (const card of [currentThreadCard(), copyIn(directMessageChannel('U0OPS1')), copyIn(directMessageChannel('U0OPS2'))]) {
      expect(text(card)).toContain('Approved by <@U0OPS2>');
    }
    expect(cardButtons(copyIn(APPROVALS)!.blocks).length).toBeGreaterThan(0);
  });

  it('does not let a copy widen who may approve: channel approvers are the thread channel, and a foreign channel or message is refused', async () => {
    const h = await harness({ extraYaml: OPEN_TO_CHANNEL });
    const { threadTs, threadCard, copyIn, currentThreadCard } = await pausedOnRoutedCard(h);
    const copy = copyIn(APPROVALS)!;
    const button = approveButton(copy);

    // One at a time: each click's refusal is posted after its ack, so concurrent clicks could answer out of order.
    const clicks = [
      { channel: APPROVALS, messageTs: copy.ts },
      { channel: ELSEWHERE, messageTs: copy.ts },
      { channel: APPROVALS, messageTs: '1799999999.000001' },
    ];
    for (const [index, where] of clicks.entries()) {
      await clickIn(h, { ...where, user: 'U0PASSERBY', ...button });
      await waitFor(() => ephemerals(h).length === index + 1, { message: `refusal ${index + 1}` });
    }
    const [fromCopy, fromElsewhere, fromOtherMessage] = ephemerals(h);
    expect(fromCopy?.text).toBe(`Only people in <#${CHANNEL}> can approve this, from the thread there, so nothing changed.`);
    expect(fromElsewhere?.text).toContain('belongs to another channel');
    // Another message in #approvals naming the step is a copy of its card the step does not record: sent to the one it does.
    expect(fromOtherMessage?.text).toContain('This copy of the request is out of date, so nothing changed');
    expect(fromOtherMessage?.text).toContain(`/archives/${APPROVALS}/p${copy.ts.replace('.', '')}|open>`);
    await h.settled();
    expect(h.invocations()).toEqual([]);
    expect(cardButtons(currentThreadCard().blocks).length).toBeGreaterThan(0);

    // The same person, in the thread's channel, is who the rule means.
    await h.click({ user: 'U0PASSERBY', cardTs: threadCard.ts, threadTs, ...approveButton(threadCard) });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted.'), { message: 'answer' });
    expect(text(copyIn(APPROVALS))).toContain('Approved by <@U0PASSERBY>');
    expect(h.invocations()).toHaveLength(1);
  });

  it('judges an edit form opened from a copy as a click on that copy, not as one in the thread', async () => {
    const h = await harness({ extraYaml: OPEN_TO_CHANNEL });
    const { copyIn } = await pausedOnRoutedCard(h);
    const copy = copyIn(APPROVALS)!;
    const edit = cardButtons(copy.blocks).find((button) => button.actionId === 'countersign_edit')!;
    await clickIn(h, { channel: APPROVALS, user: 'U0PASSERBY', messageTs: copy.ts, ...edit });
    const view = (await waitFor(() => h.slack.callsTo('views.open')[0], { message: 'views.open' })).args.view;
    const response = await h.submitView({ user: 'U0PASSERBY', view, values: fillForm(view, { Namespace: 'staging' }) });
    const body = (await response.json()) as { response_action: string; errors: Record<string, string> };
    expect(body.response_action).toBe('errors');
    expect(Object.values(body.errors).join(' ')).toContain(`Only people in <#${CHANNEL}> can approve this, from the thread there`);
    await h.settled();
    expect(h.invocations()).toEqual([]);
  });

  it('shows an expiry on every copy', async () => {
    let clock = Date.UTC(2026, 10, 21, 12, 0);
    const h = await harness({ extraYaml: ROUTED, now: () => clock, sweepIntervalMs: 20 });
    const { threadTs, copyIn, currentThreadCard } = await pausedOnRoutedCard(h);
    clock += 25 * 60 * 60 * 1000;
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text.includes('expired without a decision')), { message: 'expiry notice' });
    await h.settled({ sweep: true });
    for (const card of [currentThreadCard(), copyIn(APPROVALS), copyIn(directMessageChannel('U0OPS1')), copyIn(directMessageChannel('U0OPS2'))]) {
      expect(text(card)).toContain('Expired without a decision');
      expect(cardButtons(card?.blocks)).toEqual([]);
    }
  });

  it('shows a supersede on every copy, and a late click on a copy changes nothing', async () => {
    const h = await harness({ extraYaml: ROUTED });
    const { threadTs, copyIn, currentThreadCard } = await pausedOnRoutedCard(h, 'OK, checking prod first.');
    const inApprovals = copyIn(APPROVALS)!;
    await h.threadMessage({ user: 'UALICE', text: 'wait, check prod first', threadTs, ts: nextTs() });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'OK, checking prod first.'), { message: 'answer' });
    await h.settled();
    for (const card of [currentThreadCard(), copyIn(APPROVALS), copyIn(directMessageChannel('U0OPS1'))]) {
      expect(text(card)).toMatch(/superseded/i);
      expect(cardButtons(card?.blocks)).toEqual([]);
    }
    await clickIn(h, { channel: APPROVALS, user: 'U0OPS1', messageTs: inApprovals.ts, ...approveButton(inApprovals) });
    await waitFor(() => ephemerals(h).length === 1, { message: 'late click answered' });
    expect(ephemerals(h)[0]?.channel).toBe(APPROVALS);
    await h.settled();
    expect(h.invocations()).toEqual([]);
  });

  it('shows the card without buttons in the thread when the rule sends the decision elsewhere', async () => {
    const h = await harness({ extraYaml: ROUTED.replace(`notify: { channels`, `notify: { thread: false, channels`) });
    const { threadCard, copyIn } = await pausedOnRoutedCard(h);
    expect(text(threadCard)).toContain(`Waiting for approval in <#${APPROVALS}>`);
    expect(cardButtons(threadCard.blocks)).toEqual([]);
    expect(cardButtons(copyIn(APPROVALS)!.blocks).length).toBeGreaterThan(0);
  });
});
