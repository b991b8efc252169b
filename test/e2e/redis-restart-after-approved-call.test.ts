import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonSchema } from 'ai';
import type { ScriptedReply } from '../helpers/fake-openai.js';
import { defineTool } from '../../src/tools/tool-definition.js';
import { startRedisServer, type RedisServerHandle } from '../helpers/redis-server.js';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

/**
 * Reviewer test (8930aa3). Redis without persistence restarts empty AFTER an approved call has run,
 * while the model writes its final answer. The turn then stops at its save (StateLostError), and the
 * state-lost notice says "I stopped here and could not record this turn ... Please send your request
 * again" without a word that `migrate_db` ran: only a TurnFailedError carries the calls that ran, and a
 * refused save is not one. The requester, told to ask again, gets the migration approved and run twice.
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

describe('redis-server restarted EMPTY after an approved call ran, before the turn was saved', () => {
  it('the thread is told the approved call ran', async () => {
    const runs: string[] = [];
    const migrate = defineTool({
      name: 'migrate_db',
      description: 'Run the database migration',
      inputSchema: jsonSchema<{ target: string }>({ type: 'object', properties: { target: { type: 'string' } }, required: ['target'], additionalProperties: false }),
      approval: 'always',
      execute: async (input) => {
        runs.push(input.target);
        return { migrated: input.target };
      },
    });
    const h = await harness({ redisUrl: redis.url, tools: [migrate], environment: { COUNTERSIGN_LOCK_TTL_MS: '1500' } });
    let release: (reply: ScriptedReply) => void = () => {};
    const finalAnswer = new Promise<ScriptedReply>((resolve) => (release = resolve));
    let requests = 0;
    h.openai.setResponder(() => {
      requests += 1;
      return requests === 1 ? { toolCalls: [{ name: 'migrate_db', arguments: { target: 'prod' } }] } : finalAnswer;
    });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'migrate prod', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the approval card' });
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    // The migration ran; the model is writing its answer.
    await h.openai.waitForRequests(2, { timeoutMs: 10_000 });
    expect(runs).toEqual(['prod']);

    await redis.restart({ whileDown: () => waitFor(async () => (await healthStatus(h)) === 503, { timeoutMs: 10_000 }).then(() => undefined) });
    await waitFor(async () => (await healthStatus(h)) === 200, { timeoutMs: 10_000 });
    await waitFor(() => h.warnings().some((line) => line.includes('"redis-state-lost"')), { timeoutMs: 10_000, message: 'the heartbeat to notice the empty Redis' });
    release({ text: 'Migrated prod.' });
    await h.settled();

    const texts = threadReplies(h, threadTs).filter((message) => message.ts !== card.ts).map((message) => message.text ?? '');
    const said = JSON.stringify(texts);
    // Either the answer reached the thread, or the notice says the call ran.
    expect(texts.some((text) => text.includes('Migrated prod.') || text.includes('migrate_db')), `thread: ${said}`).toBe(true);
  });
});
