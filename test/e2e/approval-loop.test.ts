import { describe, expect, it } from 'vitest';
import { decodeApprovalActionValue } from '../../src/slack/blocks/action-ids.js';
import { conversationOf } from '../helpers/fake-openai.js';
import { CHANNEL, cardButtons, nextTs, startHarness, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();

function findCard(h: Harness, threadTs: string) {
  return h.slack.messages(CHANNEL, threadTs).find((message) => cardButtons(message.blocks).length > 0 || message.text.startsWith('Approval needed'));
}

async function waitForCard(h: Harness, threadTs: string) {
  return waitFor(() => {
    const card = findCard(h, threadTs);
    return card && cardButtons(card.blocks).length > 0 ? card : undefined;
  }, { message: 'the approval card' });
}

function repliesText(h: Harness, threadTs: string): string[] {
  return threadReplies(h, threadTs).map((message) => message.text);
}

const restartCall = { name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } };

describe('mention → card → decision → resume', () => {
  it('runs the approved command once and posts the answer in the thread', async () => {
    const h = await harness();
    h.openai.enqueue({ toolCalls: [restartCall] }, { text: 'Restarted **worker** in staging.' });
    const threadTs = nextTs();
    const response = await h.mention({ user: 'UALICE', text: 'restart the worker in staging', ts: threadTs });
    expect(response.status).toBe(200);

    const card = await waitForCard(h, threadTs);
    expect(card.text).toContain('restart_service');
    expect(JSON.stringify(card.blocks)).toContain('worker');
    await h.settled();
    expect(h.invocations()).toEqual([]);
    const firstRequest = conversationOf(h.openai.requests[0]!);
    expect(firstRequest.find((message) => message.role === 'user')?.text).toContain('<@UALICE>');

    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    const click = await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    expect(click.status).toBe(200);

    await waitFor(() => repliesText(h, threadTs).some((text) => text.includes('Restarted *worker* in staging.')), { message: 'the answer' });
    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'staging']]);
    const updatedCard = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
    expect(JSON.stringify(updatedCard.blocks)).toContain('Approved by <@UBOB>');
    expect(cardButtons(updatedCard.blocks)).toEqual([]);
    const toolResult = conversationOf(h.openai.requests[1]!).find((message) => message.role === 'tool');
    expect(toolResult?.text).toContain('ok: rollout restart deployment/worker -n staging');

    const audit = await waitFor(async () => {
      const events = await h.auditEvents();
      return events.some((event) => event.type === 'tool-executed') ? events : undefined;
    });
    expect(audit.map((event) => event.type)).toEqual(['approval-requested', 'decision', 'tool-started', 'tool-executed']);
    expect(audit[1]).toMatchObject({ outcome: 'approved', userId: 'UBOB', toolName: 'restart_service', originalInput: { service: 'worker', namespace: 'staging' }, approvedBy: ['UBOB'] });
    // What ran, and on whose countersignature: the approval of exactly this input.
    expect(audit[2]).toMatchObject({ toolName: 'restart_service', input: { service: 'worker', namespace: 'staging' }, basis: { kind: 'approval', approvedBy: ['UBOB'], version: 0 } });
    expect(audit[3]).toMatchObject({ status: 'ok', exitCode: 0, toolName: 'restart_service' });
  });

  it('tells the model a denial is a human decision and runs nothing', async () => {
    const h = await harness();
    h.openai.enqueue({ toolCalls: [restartCall] }, { text: 'Understood, I will not restart it.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
    const card = await waitForCard(h, threadTs);
    const deny = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_deny')!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...deny });

    await waitFor(() => repliesText(h, threadTs).some((text) => text.includes('I will not restart it')), { message: 'the answer' });
    await h.settled();
    expect(h.invocations()).toEqual([]);
    const toolMessage = conversationOf(h.openai.requests[1]!).find((message) => message.role === 'tool');
    expect(toolMessage?.text).toContain('Declined by <@UBOB>');
    expect(toolMessage?.text).toContain('do not retry');
    const updatedCard = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
    expect(JSON.stringify(updatedCard.blocks)).toContain('Denied by <@UBOB>');
  });

  it('runs read-only calls of the same step at once and waits only for the gated one', async () => {
    const h = await harness();
    h.openai.enqueue(
      { toolCalls: [{ name: 'get_pods', arguments: { namespace: 'staging' } }, restartCall] },
      { text: 'Pods listed and worker restarted.' },
    );
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'check pods and restart the worker', ts: threadTs });
    const card = await waitForCard(h, threadTs);
    expect(h.invocations()).toEqual([['get', 'pods', '-n', 'staging']]);
    // One call waits (Approve, Edit, Deny, Deny with reason, Approve & allow); the read-only one already ran.
    expect(cardButtons(card.blocks).map((button) => button.actionId)).toEqual([
      'countersign_approve',
      'countersign_edit',
      'countersign_deny',
      'countersign_deny_reason',
      'countersign_grant',
    ]);
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await waitFor(() => repliesText(h, threadTs).some((text) => text.includes('worker restarted')), { message: 'the answer' });
    expect(h.invocations()).toHaveLength(2);
  });

  it('executes once when two people click Approve at the same moment', async () => {
    const h = await harness();
    h.openai.enqueue({ toolCalls: [restartCall] }, { text: 'Done.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
    const card = await waitForCard(h, threadTs);
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    const clicks = await Promise.all(['UBOB', 'UCAROL', 'UBOB'].map((user) => h.click({ user, cardTs: card.ts, threadTs, ...approve })));
    expect(clicks.map((click) => click.status)).toEqual([200, 200, 200]);

    await waitFor(() => repliesText(h, threadTs).includes('Done.'), { message: 'the answer' });
    await waitFor(() => h.slack.callsTo('chat.postEphemeral').length === 2, { message: 'two ephemeral answers' });
    expect(h.invocations()).toHaveLength(1);
    expect(h.openai.requests).toHaveLength(2);
    for (const ephemeral of h.slack.callsTo('chat.postEphemeral')) expect(ephemeral.args.text).toMatch(/Already approved by <@U(BOB|CAROL)>/);
  });

  it('resumes the turn in a new bot process after a restart between card and click', async () => {
    const first = await startHarness();
    const second = await first.startReplica();
    try {
      first.openai.enqueue({ toolCalls: [restartCall] }, { text: 'Restarted after the restart.' });
      const threadTs = nextTs();
      await first.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
      const card = await waitForCard(first, threadTs);
      await first.bot.stop();

      const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
      await second.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
      await waitFor(() => repliesText(second, threadTs).includes('Restarted after the restart.'), { message: 'the answer' });
      expect(second.invocations()).toHaveLength(1);
    } finally {
      await second.stop();
      await first.slack.close();
      await first.openai.close();
    }
  });
});

describe('threads', () => {
  it('follows the thread after a mention and keeps the history', async () => {
    const h = await harness();
    h.openai.enqueue({ text: 'Hello Alice.' }, { text: 'Your first message said hello.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'hello', ts: threadTs });
    await waitFor(() => repliesText(h, threadTs).includes('Hello Alice.'), { message: 'first answer' });
    await h.threadMessage({ user: 'UBOB', text: 'what did she say?', threadTs, ts: nextTs() });
    await waitFor(() => repliesText(h, threadTs).includes('Your first message said hello.'), { message: 'second answer' });
    const conversation = conversationOf(h.openai.requests[1]!);
    const users = conversation.filter((message) => message.role === 'user').map((message) => message.text);
    expect(users[0]).toContain('<@UALICE>');
    expect(users[1]).toContain('<@UBOB>');
    expect(conversation.some((message) => message.role === 'assistant' && message.text === 'Hello Alice.')).toBe(true);
  });

  it('ignores thread messages in threads it was never mentioned in', async () => {
    const h = await harness();
    await h.threadMessage({ user: 'UBOB', text: 'unrelated chatter', threadTs: nextTs(), ts: nextTs() });
    await h.settled();
    expect(h.openai.requests).toHaveLength(0);
  });

  it('gives the model earlier thread messages when first mentioned inside a thread', async () => {
    const h = await harness();
    const threadTs = nextTs();
    h.slack.addMessage(CHANNEL, { user: 'UCAROL', text: 'the worker in staging is stuck again', ts: threadTs });
    h.slack.addMessage(CHANNEL, { user: 'UDAVE', text: 'it started after the deploy', ts: nextTs(), thread_ts: threadTs });
    h.openai.enqueue({ text: 'Looking at it.' });
    await h.mention({ user: 'UALICE', text: 'can you help?', ts: nextTs(), threadTs });
    await waitFor(() => repliesText(h, threadTs).includes('Looking at it.'), { message: 'answer' });
    const users = conversationOf(h.openai.requests[0]!).filter((message) => message.role === 'user').map((message) => message.text ?? '');
    expect(users[0]).toContain('the worker in staging is stuck again');
    expect(users[0]).toContain('it started after the deploy');
    expect(users[1]).toContain('can you help?');
  });

  it('supersedes pending calls when a newer message arrives, and tells the model', async () => {
    const h = await harness();
    h.openai.enqueue({ toolCalls: [restartCall] }, { text: 'OK, checking prod instead.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
    const card = await waitForCard(h, threadTs);
    await h.threadMessage({ user: 'UALICE', text: 'wait, actually check prod first', threadTs, ts: nextTs() });
    await waitFor(() => repliesText(h, threadTs).includes('OK, checking prod instead.'), { message: 'answer' });

    const updatedCard = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
    expect(cardButtons(updatedCard.blocks)).toEqual([]);
    expect(JSON.stringify(updatedCard.blocks)).toMatch(/superseded/i);
    const conversation = conversationOf(h.openai.requests[1]!);
    expect(conversation.find((message) => message.role === 'tool')?.text).toContain('newer message');
    expect(conversation.at(-1)?.text).toContain('check prod first');

    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await waitFor(() => h.slack.callsTo('chat.postEphemeral').length === 1, { message: 'ephemeral' });
    await h.settled();
    expect(h.invocations()).toEqual([]);
  });

  it('says so in the thread when the model fails, instead of hanging', async () => {
    const h = await harness();
    h.openai.setResponder(() => ({ error: { status: 400, message: 'model exploded' } }));
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'hello', ts: threadTs });
    const notice = await waitFor(() => repliesText(h, threadTs).find((text) => text.includes('could not finish')), { message: 'notice' });
    expect(notice).toContain('model exploded');
  });
});

describe('delivery and security', () => {
  it('answers a retried event and the message+mention pair for one post once', async () => {
    const h = await harness();
    h.openai.enqueue({ text: 'Only once.' }, { text: 'Second reply should never be requested.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'hello', ts: threadTs, eventId: 'Ev-retry-1' });
    await h.mention({ user: 'UALICE', text: 'hello', ts: threadTs, eventId: 'Ev-retry-1' });
    await waitFor(() => repliesText(h, threadTs).includes('Only once.'), { message: 'answer' });
    // The same post also arrives as a `message` event in the (now followed) thread.
    await h.threadMessage({ user: 'UALICE', text: `<@UBOT0001> hello`, threadTs, ts: threadTs });
    await h.settled();
    expect(h.openai.requests).toHaveLength(1);
    expect(repliesText(h, threadTs)).toEqual(['Only once.']);
  });

  it('rejects forged and stale signatures with 401 and does nothing', async () => {
    const h = await harness();
    const { postSlackEvent, appMentionEnvelope } = await import('../helpers/signed-request.js');
    const envelope = appMentionEnvelope({ user: 'UALICE', text: '<@UBOT0001> hello', channel: CHANNEL, teamId: 'T0TEAM001' });
    const forged = await postSlackEvent({ url: h.eventsUrl, signingSecret: 'wrong-secret', envelope });
    const stale = await postSlackEvent({ url: h.eventsUrl, signingSecret: 'test-signing-secret', envelope, timestamp: Math.floor(Date.now() / 1000) - 600 });
    expect(forged.status).toBe(401);
    expect(stale.status).toBe(401);
    await h.settled();
    expect(h.openai.requests).toHaveLength(0);
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
  });

  it('reports health with the Redis status', async () => {
    const h = await harness();
    const health = await fetch(`${h.baseUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', redis: 'up' });
  });
});

describe('a decision that comes before the card is on record', () => {
  it('still shows on the card: the process that posted it sees the step moved on and updates it', async () => {
    // The card's ts is written to the store only when the test lets it.
    let recordCard!: () => void;
    const cardRecordable = new Promise<void>((resolve) => {
      recordCard = resolve;
    });
    const h = await harness({
      wrapStore: (store) => ({
        ...store,
        setStepCard: async (...args) => {
          await cardRecordable;
          return store.setStepCard(...args);
        },
      }),
    });
    h.openai.enqueue({ toolCalls: [restartCall] }, { text: 'Restarted.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in staging', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    // Recorded while the card's ts is not: the click had no card to update.
    const { stepId } = decodeApprovalActionValue(approve.value)!;
    await waitFor(async () => (await h.bot.store.getStep(stepId))?.phase === 'complete', { message: 'the decision' });
    expect((await h.bot.store.getStep(stepId))?.cardTs).toBeUndefined();
    recordCard();
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted.'), { message: 'the answer' });
    await waitFor(
      () => {
        const current = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts);
        return current !== undefined && cardButtons(current.blocks).length === 0;
      },
      { message: 'the card showing the decision, without buttons' },
    );
  });
});
