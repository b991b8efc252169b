import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonSchema } from 'ai';
import type { ScriptedReply } from '../helpers/fake-openai.js';
import { defineTool } from '../../src/tools/tool-definition.js';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis-server.js';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

/**
 * A redis-server WITHOUT persistence (the Docker image's default run, a Redis pod without a volume,
 * a managed cache after a node replacement) is restarted while a turn is under way: it comes back
 * empty. Nobody else holds the thread (there is nothing left in Redis for anyone to take over), yet
 * the bot treats the vanished fencing token as "another process took the thread over" and stops the
 * turn "without further effects": the user's question is dropped with no word in the thread.
 */
let redis: RedisServerHandle;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis?.stop();
});

const harness = useHarnesses();

async function healthStatus(h: Harness): Promise<number> {
  const response = await fetch(`${h.baseUrl}/healthz`);
  await response.body?.cancel();
  return response.status;
}

describe('redis-server restarted EMPTY mid-turn (no persistence)', () => {
  it('the model answers after the restart: the answer (or at least a notice) reaches the thread', async () => {
    const h = await harness({ redisUrl: redis.url, environment: { COUNTERSIGN_LOCK_TTL_MS: '1500' } });
    let answer: (reply: ScriptedReply) => void = () => {};
    const reply = new Promise<ScriptedReply>((resolve) => (answer = resolve));
    h.openai.setResponder(() => reply);
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'is prod healthy?', ts: threadTs });
    await h.openai.waitForRequests(1);

    // Down only as long as it takes the bot to notice; back up with nothing in it.
    await redis.restart({ whileDown: () => waitFor(async () => (await healthStatus(h)) === 503, { timeoutMs: 10_000 }).then(() => undefined) });
    await waitFor(async () => (await healthStatus(h)) === 200, { timeoutMs: 10_000 });
    // The heartbeat (lockTtl/3) finds the token gone; give the turn its answer after that.
    await waitFor(() => h.warnings().some((line) => line.includes('"thread-lock-lost"') || line.includes('"thread-fenced"') || line.includes('"redis-state-lost"')), { timeoutMs: 10_000, message: 'the drain to notice the empty Redis' });
    answer({ text: 'Prod is healthy.' });
    await h.settled();

    const texts = threadReplies(h, threadTs).map((message) => message.text);
    // Either the answer, or a notice that the bot lost its state and the user should ask again.
    expect(texts, `thread shows: ${JSON.stringify(texts)}; warnings: ${h.warnings().join('\n')}`).not.toEqual([]);
  });

  it('an approved tool is running: it is killed mid-run and the thread is told nothing', async () => {
    let started: () => void = () => {};
    const running = new Promise<void>((resolve) => (started = resolve));
    let finish: () => void = () => {};
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const aborted: unknown[] = [];
    let abortedNow: () => void = () => {};
    const abortSeen = new Promise<void>((resolve) => (abortedNow = resolve));
    const migrate = defineTool({
      name: 'migrate_db',
      description: 'Run the database migration',
      inputSchema: jsonSchema<{ target: string }>({ type: 'object', properties: { target: { type: 'string' } }, required: ['target'], additionalProperties: false }),
      approval: 'always',
      execute: async (input, context) => {
        // Only while it runs: once it has returned, the turn may well stop (it cannot be saved).
        let running = true;
        context.abortSignal?.addEventListener('abort', () => {
          if (!running) return;
          aborted.push(context.abortSignal?.reason);
          abortedNow();
        });
        started();
        await finished;
        running = false;
        return { migrated: input.target };
      },
    });
    const h = await harness({ redisUrl: redis.url, tools: [migrate], environment: { COUNTERSIGN_LOCK_TTL_MS: '1500' } });
    h.openai.enqueue({ toolCalls: [{ name: 'migrate_db', arguments: { target: 'prod' } }] }, { text: 'Migrated prod.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'migrate prod', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the approval card' });
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await running;

    // Redis comes back empty while the migration runs: nobody else can hold the thread.
    await redis.restart({ whileDown: () => waitFor(async () => (await healthStatus(h)) === 503, { timeoutMs: 10_000 }).then(() => undefined) });
    await waitFor(async () => (await healthStatus(h)) === 200, { timeoutMs: 10_000 });
    // Barrier: the heartbeat found the token gone: either it aborted the tool, or (fixed) it said Redis lost the thread's state.
    await Promise.race([abortSeen, waitFor(() => h.warnings().some((line) => line.includes('"redis-state-lost"')), { timeoutMs: 10_000, message: 'the heartbeat to notice the empty Redis' })]);
    finish();
    await h.settled();

    const texts = threadReplies(h, threadTs).filter((message) => message.ts !== card.ts).map((message) => message.text);
    const summary = `aborted: ${JSON.stringify(aborted.map(String))}; thread: ${JSON.stringify(texts)}`;
    // The migration was killed mid-run (its abortSignal fired) although no other process took it over...
    expect(aborted, summary).toEqual([]);
    // ...and nobody hears of it: the card says "Approved by", no result, no notice.
    expect(texts, summary).not.toEqual([]);
  });

  it('a new message takes the thread after the loss while the old turn still runs: the old holder is fenced, and writes over nothing', async () => {
    let started: () => void = () => {};
    const running = new Promise<void>((resolve) => (started = resolve));
    let finish: () => void = () => {};
    const finished = new Promise<void>((resolve) => (finish = resolve));
    let abortedNow: (reason: unknown) => void = () => {};
    const abortSeen = new Promise<unknown>((resolve) => (abortedNow = resolve));
    const migrate = defineTool({
      name: 'migrate_db',
      description: 'Run the database migration',
      inputSchema: jsonSchema<{ target: string }>({ type: 'object', properties: { target: { type: 'string' } }, required: ['target'], additionalProperties: false }),
      approval: 'always',
      execute: async (input, context) => {
        context.abortSignal?.addEventListener('abort', () => abortedNow(context.abortSignal?.reason));
        started();
        await finished;
        return { migrated: input.target };
      },
    });
    const h = await harness({ redisUrl: redis.url, tools: [migrate], environment: { COUNTERSIGN_LOCK_TTL_MS: '1500' } });
    h.openai.enqueue({ toolCalls: [{ name: 'migrate_db', arguments: { target: 'prod' } }] }, { text: 'Nothing I know of is running.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'migrate prod', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the approval card' });
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await running;
    await redis.restart({ whileDown: () => waitFor(async () => (await healthStatus(h)) === 503, { timeoutMs: 10_000 }).then(() => undefined) });
    await waitFor(async () => (await healthStatus(h)) === 200, { timeoutMs: 10_000 });
    await waitFor(() => h.warnings().some((line) => line.includes('"redis-state-lost"')), { timeoutMs: 10_000, message: 'the heartbeat to notice the empty Redis' });

    // Someone asks again in the thread: a fresh turn takes it (there is no lock or token left to stop it).
    await h.mention({ user: 'UALICE', text: 'is anything running?', threadTs, ts: nextTs() });
    // The old holder's heartbeat finds the new token: fenced as before, its tool told to stop.
    const reason = await abortSeen;
    finish();
    await h.settled();

    expect(String(reason)).toContain('FencedError');
    const texts = threadReplies(h, threadTs).filter((message) => message.ts !== card.ts).map((message) => message.text);
    expect(texts, JSON.stringify(texts)).toEqual(['Nothing I know of is running.']);
    // The new holder's state stands: the old turn wrote nothing over it.
    const saved = await h.bot.store.getThread(`T0TEAM001:C0OPS0001:${threadTs}`);
    // (The card's text comes back as the thread's earlier Slack messages, for context: that is all of the old turn it knows.)
    const history = JSON.stringify(saved?.messages);
    expect(history).toContain('is anything running?');
    expect(history).not.toContain('says:\\nmigrate prod');
    expect(history).not.toContain('migrated');
  });
});
