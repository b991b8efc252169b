import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { watchBots } from '../helpers/bot-activity.js';
import { startFakeOpenAI } from '../helpers/fake-openai.js';
import { startFakeSlackApi } from '../helpers/fake-slack-api.js';
import { startReplyLosingProxy, type ReplyLosingProxy } from '../helpers/reply-losing-proxy.js';
import { BOT_USER_ID, TEAM_ID, nextTs, startHarness, threadReplies, waitFor, type Harness, type HarnessOptions } from './harness.js';

const running: Harness[] = [];
const proxies: ReplyLosingProxy[] = [];
let world: NonNullable<HarnessOptions['shared']> | undefined;
afterEach(async () => {
  while (running.length > 0) await running.pop()?.stop();
  for (const proxy of proxies.splice(0)) await proxy.close();
  await world?.slack.close();
  await world?.openai.close();
  world = undefined;
});

/**
 * A receiver hands a mention off (HAND_OFF_WORK_SCRIPT) and the reply is lost on the way back (a
 * network blip, a proxy reset): ioredis sends the script again on its new connection, and, with no
 * attempt key (ENQUEUE_AND_LOCK_SCRIPT has one for this), the message is queued twice. The worker
 * takes the second copy for an item a stopped process left (`handledTs`) and continues the "interrupted"
 * turn: a turn that failed, with its Try again notice posted, is run again by itself.
 */
describe('a mention handed off by a receiver whose hand-off reply was lost', () => {
  it('is taken in once: a failed turn waits for Try again and the model is not asked again', async () => {
    const marker = `lostreply${Date.now()}`;
    const proxy = await startReplyLosingProxy(inject('redisUrl'), marker);
    proxies.push(proxy);
    world = {
      slack: await startFakeSlackApi({ botUserId: BOT_USER_ID, teamId: TEAM_ID }),
      openai: await startFakeOpenAI(),
      keyPrefix: `e2e:hand-off-lost:${Date.now()}:${Math.random()}:`,
      logFile: join(mkdtempSync(join(tmpdir(), 'countersign-hand-off-lost-')), 'invocations.log'),
      watch: watchBots(),
    };
    const receiver = await startHarness({ shared: world, redisUrl: proxy.url, environment: { COUNTERSIGN_ROLE: 'receiver' } });
    running.push(receiver);
    const worker = await startHarness({ shared: world, environment: { COUNTERSIGN_ROLE: 'worker' } });
    running.push(worker);
    world.openai.enqueue({ error: { status: 400, message: 'context too long' } }, { text: 'answered without Try again' });

    const threadTs = nextTs();
    expect((await receiver.mention({ user: 'UALICE', text: `how are the pods ${marker}`, ts: threadTs })).status).toBe(200);
    await waitFor(() => proxy.cut(), { message: 'the hand-off reply to be cut' });
    await waitFor(() => threadReplies(worker, threadTs).some((message) => /Try again/i.test(message.text)), { timeoutMs: 15_000, message: 'the failure notice' });
    await worker.settled();

    expect(world.openai.requests).toHaveLength(1);
    expect(threadReplies(worker, threadTs).map((message) => message.text).filter((text) => text === 'answered without Try again')).toEqual([]);
  }, 40_000);
});
