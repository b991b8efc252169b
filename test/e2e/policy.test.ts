import { describe, expect, it } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import { fillForm } from './fill-form.js';
import { CHANNEL, cardButtons, nextTs, startHarness, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();

const POLICY = `
policy:
  rules:
    - name: restarts need ops
      tools: [restart_service]
      approvers: [U0OPS1, U0OPS2, "group:S0ONCALL"]
      required: 2
      expiry: 1h
      reminder: 30m
      onExpiry: continue
`;

const restart = { name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } };

async function pausedOn(h: Harness, requester = 'UALICE', ...then: string[]) {
  h.openai.enqueue({ toolCalls: [restart] }, ...then.map((text) => ({ text })));
  const threadTs = nextTs();
  await h.mention({ user: requester, text: 'restart the worker in prod', ts: threadTs });
  const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
  const button = (actionId: string) => cardButtons(card.blocks).find((candidate) => candidate.actionId === actionId)!;
  const currentCard = () => h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
  return { threadTs, card, button, currentCard };
}

const ephemerals = (h: Harness) => h.slack.callsTo('chat.postEphemeral').map((call) => ({ user: call.args.user, text: String(call.args.text) }));

describe('who may approve', () => {
  it('refuses a click from someone the policy does not name, privately, and changes nothing', async () => {
    const h = await harness({ extraYaml: POLICY });
    const { threadTs, card, button, currentCard } = await pausedOn(h);
    expect(JSON.stringify(card.blocks)).toContain('Approvers: <@U0OPS1>, <@U0OPS2> or <!subteam^S0ONCALL> · 2 approvals needed');
    await h.click({ user: 'U0MALLORY', cardTs: card.ts, threadTs, ...button('countersign_approve') });
    await h.click({ user: 'U0MALLORY', cardTs: card.ts, threadTs, ...button('countersign_deny') });
    await waitFor(() => ephemerals(h).length === 2, { message: 'two ephemeral refusals' });
    for (const refusal of ephemerals(h)) {
      expect(refusal.user).toBe('U0MALLORY');
      expect(refusal.text).toContain('Only <@U0OPS1>, <@U0OPS2> or members of <!subteam^S0ONCALL> can');
    }
    await h.settled();
    expect(h.slack.callsTo('chat.update')).toHaveLength(0);
    expect(JSON.stringify(currentCard().blocks)).toBe(JSON.stringify(card.blocks));
    const audit = await h.auditEvents();
    expect(audit.filter((event) => event.type === 'action-refused')).toHaveLength(2);
    expect(h.invocations()).toEqual([]);
  });

  it('refuses an unauthorized edit submit in the form and runs nothing', async () => {
    const h = await harness({ extraYaml: POLICY });
    const { threadTs, card, button } = await pausedOn(h);
    await h.click({ user: 'U0MALLORY', cardTs: card.ts, threadTs, ...button('countersign_edit') });
    const view = (await waitFor(() => h.slack.callsTo('views.open')[0], { message: 'views.open' })).args.view;
    const response = await h.submitView({ user: 'U0MALLORY', view, values: fillForm(view, { Namespace: 'staging' }) });
    const body = (await response.json()) as { response_action: string; errors: Record<string, string> };
    expect(body.response_action).toBe('errors');
    expect(Object.values(body.errors).join(' ')).toContain('can approve this');
    await h.settled();
    expect(h.invocations()).toEqual([]);
    expect((await h.auditEvents()).map((event) => event.type)).toContain('action-refused');
  });

  it('needs two distinct approvers: a double click counts once, and two concurrent approvers run it once', async () => {
    const h = await harness({ extraYaml: POLICY });
    h.slack.setUsergroupUsers('S0ONCALL', ['U0ONCALL']);
    const { threadTs, card, button, currentCard } = await pausedOn(h, 'UALICE', 'Restarted with two approvals.');
    await Promise.all([1, 2].map(() => h.click({ user: 'U0OPS1', cardTs: card.ts, threadTs, ...button('countersign_approve') })));
    await waitFor(() => JSON.stringify(currentCard().blocks).includes('1 of 2 approvals'), { message: 'partial approval on the card' });
    await waitFor(() => ephemerals(h).some((message) => message.text.includes('You already approved this')), { message: 'double-click refusal' });
    await h.settled();
    expect(h.invocations()).toEqual([]);

    await Promise.all(['U0OPS2', 'U0ONCALL'].map((user) => h.click({ user, cardTs: card.ts, threadTs, ...button('countersign_approve') })));
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted with two approvals.'), { message: 'answer' });
    expect(h.invocations()).toHaveLength(1);
    expect(h.openai.requests).toHaveLength(2);
    expect(JSON.stringify(currentCard().blocks)).toMatch(/Approved by <@U0OPS1> and <@U0(OPS2|ONCALL)>/);
  });

  it('does not let the requester approve their own request when approvers are named', async () => {
    const h = await harness({ extraYaml: POLICY });
    const { threadTs, card, button } = await pausedOn(h, 'U0OPS1');
    await h.click({ user: 'U0OPS1', cardTs: card.ts, threadTs, ...button('countersign_approve') });
    const refusal = await waitFor(() => ephemerals(h)[0], { message: 'refusal' });
    expect(refusal.text).toContain('You asked for this, so someone else must approve it');
    await h.settled();
    expect(h.invocations()).toEqual([]);
  });
});

describe('expiry', () => {
  it('reminds the approvers, then expires once across two bot processes and tells the model it was not a denial', async () => {
    let clock = Date.UTC(2026, 10, 21, 12, 0);
    const options = { extraYaml: POLICY, now: () => clock, sweepIntervalMs: 20 };
    const first = await startHarness(options);
    const second = await first.startReplica();
    try {
      const { threadTs, card, currentCard } = await pausedOn(first, 'UALICE', 'The restart request expired; tell me if you still need it.');
      clock += 31 * 60 * 1000;
      const reminder = await waitFor(() => threadReplies(first, threadTs).find((message) => message.text.includes('Approval still needed')), { message: 'reminder' });
      expect(reminder.text).toContain('<@U0OPS1> <@U0OPS2> <!subteam^S0ONCALL>');
      clock += 30 * 60 * 1000;
      await waitFor(() => threadReplies(first, threadTs).some((message) => message.text.startsWith('The restart request expired')), { message: 'answer' });
      // Reminders and expiry come from both processes' sweeps, not from Slack requests.
      await first.settled({ sweep: true });

      expect(threadReplies(first, threadTs).filter((message) => message.text.includes('Approval still needed'))).toHaveLength(1);
      expect(JSON.stringify(currentCard().blocks)).toContain('Expired without a decision');
      expect(cardButtons(currentCard().blocks)).toEqual([]);
      const audit = await first.auditEvents();
      expect(audit.filter((event) => event.type === 'expired')).toHaveLength(1);
      expect(first.openai.requests).toHaveLength(2);
      const toolMessage = conversationOf(first.openai.requests[1]!).find((message) => message.role === 'tool')?.text ?? '';
      expect(toolMessage).toContain('This is not a denial');
      expect(first.invocations()).toEqual([]);
      expect(card.ts).toBeDefined();
    } finally {
      await second.stop();
      await first.stop();
    }
  });

  it('ends the turn without asking the model when the rule says expiry stops it', async () => {
    let clock = Date.UTC(2026, 10, 21, 12, 0);
    const h = await harness({ extraYaml: POLICY.replace('onExpiry: continue', 'onExpiry: stop'), now: () => clock, sweepIntervalMs: 20 });
    const { threadTs } = await pausedOn(h);
    clock += 2 * 60 * 60 * 1000;
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text.includes('expired without a decision, so nothing was run')), { message: 'notice' });
    await h.settled();
    expect(h.openai.requests).toHaveLength(1);
    expect(h.invocations()).toEqual([]);
  });

  it('says which calls were denied when expiry stops a step whose other call nobody decided', async () => {
    let clock = Date.UTC(2026, 10, 21, 12, 0);
    const h = await harness({ extraYaml: POLICY.replace('onExpiry: continue', 'onExpiry: stop'), now: () => clock, sweepIntervalMs: 20 });
    h.openai.enqueue({ toolCalls: [restart, { name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } }] });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker and the api in prod', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    const firstCallDeny = cardButtons((card.blocks as any[]).filter((block) => String(block.block_id).startsWith('countersign_call_0_'))).find((button) => button.actionId === 'countersign_deny')!;
    await h.click({ user: 'U0OPS1', cardTs: card.ts, threadTs, ...firstCallDeny });
    await waitFor(() => JSON.stringify(h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)?.blocks).includes('Denied by <@U0OPS1>'), { message: 'the denial on the card' });
    clock += 2 * 60 * 60 * 1000;
    const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.startsWith(':alarm_clock:')), { message: 'notice' });
    expect(notice.text).toBe(':alarm_clock: The approval request expired: 1 call was denied and 1 expired without a decision, so nothing was run. Mention me to try again.');
    await h.settled();
    expect(h.openai.requests).toHaveLength(1);
    expect(h.invocations()).toEqual([]);
  });
});

describe('edits that raise the stakes', () => {
  const TIERED = `
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      input: [{ field: namespace, equals: prod }]
      approvers: [U0SRELEAD]
    - name: other restarts
      tools: [restart_service]
`;

  it('keeps a staging call edited to prod as a new version that only the prod approver can approve, and runs it once they do', async () => {
    const h = await harness({ extraYaml: TIERED });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'Restarted in prod.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    const edit = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_edit')!;
    const approveOld = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;

    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...edit });
    const view = (await waitFor(() => h.slack.callsTo('views.open')[0], { message: 'editor' })).args.view;
    const submitted = await h.submitView({ user: 'UBOB', view, values: fillForm(view, { Namespace: 'prod' }) });
    expect(submitted.status).toBe(200);
    const notice = await waitFor(() => ephemerals(h).find((message) => message.user === 'UBOB'), { message: 'a private word to the editor' });
    expect(notice.text).toContain('only <@U0SRELEAD> can approve it');
    const updated = await waitFor(() => {
      const current = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts);
      return current && JSON.stringify(current.blocks).includes('Version 2') ? current : undefined;
    }, { message: 'the card showing version 2' });
    expect(JSON.stringify(updated.blocks)).toContain('Approvers: <@U0SRELEAD>');

    // Bob's old Approve button names version 1: refused as stale. Bob cannot approve prod at all.
    await h.click({ user: 'UCAROL', cardTs: card.ts, threadTs, ...approveOld });
    await waitFor(() => ephemerals(h).some((message) => message.user === 'UCAROL' && message.text.includes('changed since you looked')), { message: 'stale refusal' });
    const approveNew = cardButtons(updated.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approveNew });
    await waitFor(() => ephemerals(h).some((message) => message.user === 'UBOB' && message.text.includes('Only <@U0SRELEAD>')), { message: 'refusal of Bob' });
    await h.settled();
    expect(h.invocations()).toEqual([]);

    await h.click({ user: 'U0SRELEAD', cardTs: card.ts, threadTs, ...approveNew });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted in prod.'), { message: 'answer' });
    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'prod']]);
  });
});

describe('auto-approve mode', () => {
  it('runs matching calls without a card in an auto-approve channel, notes it and audits it, unless the rule forbids it', async () => {
    const h = await harness({
      extraYaml: `
policy:
  autoApprove:
    channels: [${CHANNEL}]
  rules:
    - name: never automatic
      tools: [restart_service]
      input: [{ field: namespace, equals: prod }]
      autoApprove: forbidden
`,
    });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'Restarted automatically.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UBOT_SCHEDULER', text: 'nightly restart', ts: threadTs });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted automatically.'), { message: 'answer' });
    expect(h.invocations()).toHaveLength(1);
    expect(threadReplies(h, threadTs).some((message) => message.text.includes('auto-approve mode is on here'))).toBe(true);
    expect(threadReplies(h, threadTs).some((message) => cardButtons(message.blocks).length > 0)).toBe(false);
    expect((await h.auditEvents()).filter((event) => event.type === 'auto-approved')).toHaveLength(1);

    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] });
    const prodThread = nextTs();
    await h.mention({ user: 'UBOT_SCHEDULER', text: 'prod restart', ts: prodThread });
    await waitFor(() => threadReplies(h, prodThread).find((message) => cardButtons(message.blocks).length > 0), { message: 'a card for prod' });
    expect(h.invocations()).toHaveLength(1);
  });
});
