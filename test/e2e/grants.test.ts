import { describe, expect, it } from 'vitest';
import { MESSAGE_BLOCKS_MAX, blockKitProblems } from '../helpers/block-kit-limits.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';
import { grantFromCard } from './grant-form.js';

const harness = useHarnesses();

const restart = (namespace = 'staging') => ({ name: 'restart_service', arguments: { service: 'worker', namespace } });

/** Model: call the tool, then answer; returns the card posted for it, or undefined when it ran at once. */
async function ask(h: Harness, options: { threadTs?: string; namespace?: string; answer: string }) {
  h.openai.enqueue({ toolCalls: [restart(options.namespace)] }, { text: options.answer });
  const threadTs = options.threadTs ?? nextTs();
  const ts = options.threadTs ? nextTs() : threadTs;
  const seen = new Set(threadReplies(h, threadTs).map((message) => message.ts));
  await h.mention({ user: 'UALICE', text: 'restart the worker', ts, ...(options.threadTs ? { threadTs: options.threadTs } : {}) });
  const fresh = () => threadReplies(h, threadTs).filter((message) => !seen.has(message.ts));
  const outcome = await waitFor(
    () => fresh().find((message) => message.text === options.answer) ?? fresh().find((message) => cardButtons(message.blocks).length > 0),
    { message: 'card or answer' },
  );
  return { threadTs, card: cardButtons(outcome.blocks).length > 0 ? outcome : undefined };
}

describe('always-allow grants', () => {
  it('approves the call and lets later matching calls in the thread run without a card, with a note naming the grant', async () => {
    const h = await harness();
    const first = await ask(h, { answer: 'Restarted once.' });
    expect(first.card).toBeDefined();
    const response = await grantFromCard(h, { card: first.card!, threadTs: first.threadTs, scope: 'thread' });
    expect(response.status).toBe(200);
    await waitFor(() => threadReplies(h, first.threadTs).some((message) => message.text === 'Restarted once.'), { message: 'first answer' });

    const second = await ask(h, { threadTs: first.threadTs, answer: 'Restarted again.' });
    expect(second.card).toBeUndefined();
    expect(h.invocations()).toHaveLength(2);
    // Posted once the model is done, which can be after the streamed answer already reads in full.
    const note = await waitFor(() => threadReplies(h, first.threadTs).find((message) => message.text.includes('ran without a card')), { message: 'the note' });
    expect(note.text).toContain("allowed by <@UBOB>'s grant for this thread");

    const other = await ask(h, { answer: 'Elsewhere.' });
    expect(other.card).toBeDefined();
    const types = (await h.auditEvents()).map((event) => event.type);
    expect(types).toContain('grant-created');
    expect(types).toContain('grant-used');
  });

  it('covers only identical arguments when asked to', async () => {
    const h = await harness();
    const first = await ask(h, { answer: 'ok 1' });
    await grantFromCard(h, { card: first.card!, threadTs: first.threadTs, scope: 'channel', identical: true });
    await waitFor(() => threadReplies(h, first.threadTs).some((message) => message.text === 'ok 1'), { message: 'first answer' });
    expect((await ask(h, { answer: 'same args' })).card).toBeUndefined();
    expect((await ask(h, { namespace: 'prod', answer: 'other args' })).card).toBeDefined();
  });

  it('lists grants with /countersign grants and stops covering calls once revoked', async () => {
    const h = await harness();
    const first = await ask(h, { answer: 'granted' });
    await grantFromCard(h, { card: first.card!, threadTs: first.threadTs, scope: 'channel', hours: 4 });
    await waitFor(() => threadReplies(h, first.threadTs).some((message) => message.text === 'granted'), { message: 'answer' });

    await h.slashCommand({ user: 'UCAROL', text: 'grants' });
    const list = await waitFor(() => h.slack.callsTo('chat.postEphemeral').find((call) => String(call.args.text).includes('active grant')), { message: 'grant list' });
    expect(list.args.user).toBe('UCAROL');
    const revoke = (list.args.blocks as any[])[0].accessory;
    expect(JSON.stringify(list.args.blocks)).toContain('granted by <@UBOB>');

    await h.click({ user: 'UCAROL', cardTs: '1.1', threadTs: first.threadTs, actionId: revoke.action_id, value: revoke.value });
    await waitFor(() => h.slack.callsTo('chat.postEphemeral').some((call) => String(call.args.text).startsWith('Revoked the grant')), { message: 'revoked' });
    expect((await ask(h, { answer: 'asks again' })).card).toBeDefined();
    expect((await h.auditEvents()).map((event) => event.type)).toContain('grant-revoked');
  });

  it('stops covering calls when the grant expires', async () => {
    let clock = Date.now();
    const h = await harness({ now: () => clock });
    const first = await ask(h, { answer: 'granted' });
    await grantFromCard(h, { card: first.card!, threadTs: first.threadTs, scope: 'channel', hours: 1 });
    await waitFor(() => threadReplies(h, first.threadTs).some((message) => message.text === 'granted'), { message: 'answer' });
    clock += 61 * 60 * 1000;
    expect((await ask(h, { answer: 'after expiry' })).card).toBeDefined();
  });

  it('offers no grant where a rule forbids it', async () => {
    const h = await harness({ extraYaml: 'policy:\n  rules:\n    - tools: [restart_service]\n      grants: forbidden\n' });
    const first = await ask(h, { answer: 'n/a' });
    expect(cardButtons(first.card!.blocks).map((button) => button.actionId)).not.toContain('countersign_grant');
  });
});

describe('grants given on an escalated request', () => {
  const LADDER = `
policy:
  rules:
    - name: staging restarts
      tools: [restart_service]
      approvers: [U0STG]
      expiry: 1h
      escalation:
        - { after: 10m, addApprovers: [U0LEAD] }
`;

  // The grant is the rule's own approver's word carried forward, so it covers later calls under the
  // rule whether or not the request had climbed the ladder; the fallback approver's does not, since
  // the rule alone (without this request's hops) judges those calls.
  it.each([
    { who: "the rule's own approver after a hop", user: 'U0STG', hop: true, covers: true },
    { who: "the rule's own approver before any hop", user: 'U0STG', hop: false, covers: true },
    { who: 'the fallback approver the hop added', user: 'U0LEAD', hop: true, covers: false },
  ])('a grant by $who: a later call under the rule runs without a card: $covers', async ({ user, hop, covers }) => {
    let clock = Date.now();
    const h = await harness({ extraYaml: LADDER, now: () => clock, sweepIntervalMs: 20 });
    const first = await ask(h, { answer: 'first done' });
    if (hop) {
      clock += 11 * 60 * 1000;
      await waitFor(() => threadReplies(h, first.threadTs).find((message) => message.text.includes('Escalated')), { message: 'the hop' });
      await h.settled({ sweep: true });
    }
    const card = h.slack.messages(CHANNEL, first.threadTs).find((message) => message.ts === first.card!.ts)!;
    expect((await grantFromCard(h, { card, threadTs: first.threadTs, scope: 'channel', hours: 4, user })).status).toBe(200);
    await waitFor(() => threadReplies(h, first.threadTs).some((message) => message.text === 'first done'), { message: 'first answer' });
    expect((await h.auditEvents()).filter((event) => event.type === 'grant-created')).toHaveLength(1);

    const later = await ask(h, { answer: 'second done' });
    expect(later.card === undefined, 'the later call ran without a card').toBe(covers);
    expect(h.invocations()).toHaveLength(covers ? 2 : 1);
  });
});

describe('/countersign pending', () => {
  it('lists the approval requests waiting in the channel, privately', async () => {
    const h = await harness();
    h.slack.setMethodHandler('chat.getPermalink', ({ args }) => ({ ok: true, permalink: `https://fake.slack.com/archives/${args.channel}/p${String(args.message_ts).replace('.', '')}` }));
    const first = await ask(h, { answer: 'n/a' });
    await h.slashCommand({ user: 'UCAROL', text: 'pending' });
    const list = await waitFor(() => h.slack.callsTo('chat.postEphemeral').find((call) => String(call.args.text).includes('waiting')), { message: 'pending list' });
    const text = JSON.stringify(list.args.blocks);
    expect(text).toContain('restart_service');
    expect(text).toContain('requested by <@UALICE>');
    expect(text).toContain(`p${first.card!.ts.replace('.', '')}`);
    expect(list.args.channel).toBe(CHANNEL);
  });

  it('answers within Slack limits when 20 requests wait, permalinks and all', async () => {
    const h = await harness();
    h.slack.setMethodHandler('chat.getPermalink', ({ args }) => ({
      ok: true,
      permalink: `https://acme-operations.slack.com/archives/${args.channel}/p${String(args.message_ts).replace('.', '')}?thread_ts=${String(args.message_ts)}&cid=${args.channel}`,
    }));
    for (let index = 0; index < 20; index++) {
      // Only the call is queued: each request stays waiting on its card.
      h.openai.enqueue({ toolCalls: [restart(index % 2 === 0 ? 'staging' : 'prod')] });
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
      await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    }
    const before = h.slack.callsTo('chat.postEphemeral').length;
    await h.slashCommand({ user: 'UCAROL', text: 'pending' });
    const list = await waitFor(() => h.slack.callsTo('chat.postEphemeral')[before], { message: 'the pending list' });
    expect(list.args.channel).toBe(CHANNEL);
    // One section of all the lines was 4,879 characters: Slack refused it and Carol saw nothing.
    const sections = (list.args.blocks as Array<{ type: string; text?: { text?: string } }>).filter((block) => block.type === 'section');
    expect(Math.max(...sections.map((block) => block.text?.text?.length ?? 0))).toBeLessThanOrEqual(3000);
    // The check the emulator applies before it answers invalid_blocks.
    expect(blockKitProblems({ blocks: list.args.blocks, maxBlocks: MESSAGE_BLOCKS_MAX })).toEqual([]);
    // Every request is listed, each with its card's link.
    const text = JSON.stringify(list.args.blocks);
    expect(text.match(/open the card/g)).toHaveLength(20);
  }, 120_000);

  it('tells the person when Slack refuses the list, rather than leaving them with nothing', async () => {
    const h = await harness();
    await ask(h, { answer: 'n/a' });
    h.slack.failNext('chat.postEphemeral', { error: 'invalid_blocks' });
    await h.slashCommand({ user: 'UCAROL', text: 'pending' });
    const notice = await waitFor(() => h.slack.callsTo('chat.postEphemeral').find((call) => String(call.args.text).includes('would not show that list')), { message: 'the notice' });
    expect(notice.args).toMatchObject({ channel: CHANNEL, user: 'UCAROL' });
    expect(notice.args.blocks).toBeUndefined();
  });
});
