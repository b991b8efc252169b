import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conversationOf, type ScriptedReply } from '../helpers/fake-openai.js';
import { decodeApprovalActionValue } from '../../src/slack/blocks/action-ids.js';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis-server.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

/**
 * A real redis-server is stopped and started again while a turn is under way. It keeps its data
 * across the restart (an fsynced append-only file), like a production Redis: what the bot saved
 * before the outage is there afterwards; what it tried to save during the outage is not.
 */
let redis: RedisServerHandle;
beforeAll(async () => {
  redis = await startRedisServer({ persist: true });
});
afterAll(async () => {
  await redis?.stop();
});

const harness = useHarnesses();

/**
 * Starts a bot and mentions it; returns once the model has the request. The model's reply waits
 * until the test hands it over with `answer`.
 */
async function mentionWhileModelThinks(text: string) {
  const h = await harness({ redisUrl: redis.url });
  let answer: (reply: ScriptedReply) => void = () => {};
  const reply = new Promise<ScriptedReply>((resolve) => (answer = resolve));
  h.openai.setResponder(() => reply);
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text, ts: threadTs });
  await h.openai.waitForRequests(1);
  return { h, threadTs, answer };
}

async function healthStatus(h: Harness): Promise<number> {
  const response = await fetch(`${h.baseUrl}/healthz`);
  await response.body?.cancel();
  return response.status;
}

/** Waits until `/healthz` answers `status`: the bot's own connection to Redis is down, or back. */
function healthTurns(h: Harness, status: 200 | 503): Promise<true> {
  return waitFor(async () => (await healthStatus(h)) === status, { timeoutMs: 10_000, message: `GET /healthz to answer ${status}` });
}

const texts = (h: Harness, threadTs: string) => threadReplies(h, threadTs).map((message) => message.text);
const countOf = (h: Harness, threadTs: string, text: string) => texts(h, threadTs).filter((posted) => posted === text).length;
const waitForReply = (h: Harness, threadTs: string, text: string) =>
  waitFor(() => texts(h, threadTs).includes(text), { timeoutMs: 10_000, message: `"${text}" in the thread` }).catch((error: Error) => {
    // What the thread and the clicker were shown says where the turn stopped (seen once beside a second suite).
    const told = h.slack.callsTo('chat.postEphemeral').map((call) => String(call.args.text));
    throw new Error(`${error.message}; the thread shows: ${texts(h, threadTs).map((posted) => posted.slice(0, 80)).join(' | ')}; told privately: ${told.join(' | ') || 'nothing'}; model requests: ${h.openai.requests.length}`);
  });
const userTexts = (h: Harness, request: number) =>
  conversationOf(h.openai.requests[request]!)
    .filter((message) => message.role === 'user')
    .map((message) => message.text)
    .join('\n');

describe('redis-server stopped and restarted mid-turn', () => {
  it('down while the model is thinking and back before it answers: the turn completes and the answer is posted once', async () => {
    const { h, threadTs, answer } = await mentionWhileModelThinks('is prod healthy?');

    await redis.restart({ whileDown: () => healthTurns(h, 503).then(() => undefined) });
    await healthTurns(h, 200);
    answer({ text: 'Prod is healthy.' });
    await waitForReply(h, threadTs, 'Prod is healthy.');

    // The saved history is whole: the next message continues the same conversation.
    h.openai.setResponder(() => ({ text: 'Staging too.' }));
    await h.threadMessage({ user: 'UALICE', text: 'and staging?', threadTs });
    await waitForReply(h, threadTs, 'Staging too.');
    expect(texts(h, threadTs)).toEqual(['Prod is healthy.', 'Staging too.']);
    expect(h.openai.requests).toHaveLength(2);
    const second = conversationOf(h.openai.requests[1]!).map((message) => message.text).join('\n');
    expect(second).toContain('is prod healthy?');
    expect(second).toContain('Prod is healthy.');
    expect(second).toContain('and staging?');
  });

  it('down when the answer must be saved: a short message in the thread, and after the restart the next message is answered', async () => {
    const { h, threadTs, answer } = await mentionWhileModelThinks('is prod healthy?');

    await redis.restart({
      whileDown: async () => {
        // Slow enough to stream (an answer complete sooner is posted whole, after its save).
        answer({ text: 'Prod is healthy (never saved).', deltaDelayMs: 100 });
        const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('Something went wrong on my side')), {
          timeoutMs: 10_000,
          message: 'a failure notice in the thread',
        });
        expect(notice.text).toContain('Please try again');
        expect(notice.text).toContain('the state store (Redis) is unreachable');
        expect(await healthStatus(h)).toBe(503);
        // Down for longer than the failed turn: until the bot's queue bookkeeping after the notice
        // has failed too (it tries again while it holds the thread's lock).
        await waitFor(() => h.warnings().some((line) => line.includes('"event":"thread-queue-unreachable"')), { timeoutMs: 10_000, message: 'the queue bookkeeping to fail' });
      },
    });
    await healthTurns(h, 200);

    h.openai.setResponder(() => ({ text: 'Prod and staging are healthy.' }));
    await h.threadMessage({ user: 'UALICE', text: 'and staging?', threadTs });
    await waitForReply(h, threadTs, 'Prod and staging are healthy.');
    // One request per message: the interrupted turn was not run again behind the user's back, and
    // the model saw both of the user's messages.
    expect(h.openai.requests).toHaveLength(2);
    expect(userTexts(h, 1)).toContain('is prod healthy?');
    expect(userTexts(h, 1)).toContain('and staging?');
    expect(countOf(h, threadTs, 'Prod and staging are healthy.')).toBe(1);
    // The answer was streamed before it could be saved: it stays, marked as cut off, and is not repeated.
    const unsaved = texts(h, threadTs).filter((text) => text.includes('never saved'));
    expect(unsaved).toHaveLength(1);
    expect(unsaved[0]).toMatch(/ …$/);
  });

  it('Try again clicked while down: told privately that nothing was queued; after the restart it continues the turn', async () => {
    const h = await harness({ redisUrl: redis.url });
    h.openai.setResponder(() => ({ error: { status: 400, message: 'context too long' } }));
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'is prod healthy?', ts: threadTs });
    const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('could not finish')), { message: 'the failure notice' });
    const retry = cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry')!;

    await redis.restart({
      whileDown: async () => {
        await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...retry });
        const ephemeral = await h.slack.waitForCall('chat.postEphemeral', undefined, { timeoutMs: 10_000 });
        expect(ephemeral.args.text).toContain('could not queue the retry');
      },
    });
    await healthTurns(h, 200);
    h.openai.setResponder(() => ({ text: 'Prod is healthy.' }));
    await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...retry });
    await waitForReply(h, threadTs, 'Prod is healthy.');
  });

  it('Approve clicked while down for longer than a click waits: told privately it was not recorded, nothing runs, /healthz 503; after the restart Approve runs the call once', async () => {
    // A click waits 1 s for Redis here, not CLICK_STORE_WAIT_MS: the restart outlasts it all the same.
    const h = await harness({ redisUrl: redis.url, storeWaitMs: 1_000 });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'Restarted worker in staging.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in staging', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the approval card' });
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;

    await redis.restart({
      whileDown: async () => {
        const health = healthStatus(h);
        const click = await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
        expect(click.status).toBe(200);
        const ephemeral = await h.slack.waitForCall('chat.postEphemeral', undefined, { timeoutMs: 10_000 });
        expect(ephemeral.args).toMatchObject({ channel: CHANNEL, user: 'UBOB' });
        expect(ephemeral.args.text).toContain('could not record your decision');
        expect(await health).toBe(503);
      },
    });
    await healthTurns(h, 200);
    // Nothing was reported as recorded and nothing ran: the card still asks for a decision.
    expect(h.invocations()).toEqual([]);
    const unchanged = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
    expect(cardButtons(unchanged.blocks).map((button) => button.actionId)).toContain('countersign_approve');
    expect(JSON.stringify(unchanged.blocks)).not.toContain('Approved by');

    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await waitForReply(h, threadTs, 'Restarted worker in staging.');
    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'staging']]);
    const approved = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
    expect(JSON.stringify(approved.blocks)).toContain('Approved by <@UBOB>');
    expect(h.slack.callsTo('chat.postEphemeral')).toHaveLength(1);
    expect(h.openai.requests).toHaveLength(2);
    const audit = await waitFor(async () => {
      const events = await h.auditEvents();
      return events.some((event) => event.type === 'tool-executed') ? events : undefined;
    });
    expect(audit.map((event) => event.type)).toEqual(['approval-requested', 'decision', 'tool-started', 'tool-executed']);
  });

  it('Approve clicked during a restart that ends within seconds: recorded once Redis is back, the call runs once, no "try again"', async () => {
    let stepId: string | undefined;
    let readFailed: () => void = () => {};
    const h = await harness({
      redisUrl: redis.url,
      // The barrier: the click's decision has read its step and found Redis down.
      wrapStore: (store) => ({
        ...store,
        getStep: (id) =>
          store.getStep(id).catch((error: unknown) => {
            if (id === stepId) readFailed();
            throw error;
          }),
      }),
    });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'Restarted worker in staging.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in staging', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the approval card' });
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    stepId = decodeApprovalActionValue(approve.value)?.stepId;
    expect(stepId).toBeDefined();

    await redis.restart({
      whileDown: async () => {
        const failed = new Promise<void>((resolve) => (readFailed = resolve));
        const click = await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
        expect(click.status).toBe(200);
        await failed;
      },
    });
    await waitForReply(h, threadTs, 'Restarted worker in staging.');
    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'staging']]);
    const approved = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
    expect(JSON.stringify(approved.blocks)).toContain('Approved by <@UBOB>');
    expect(h.slack.callsTo('chat.postEphemeral')).toEqual([]);
    expect(h.openai.requests).toHaveLength(2);
  });
});
