import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { DEMO_MODEL_NOTICE } from '../../src/sandbox/demo-model/demo-model.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/start-sandbox.js';
import { cardIn, repliesIn, sandboxPage, type SandboxPage } from './sandbox-page.js';

/**
 * The sandbox with nothing set, as `npm start` runs it for a newcomer: the example config (its
 * simulated kubectl tools and its policy) and the built-in demo model, in one process.
 */
describe('the sandbox with its defaults', () => {
  let sandbox: RunningSandbox;
  let page: SandboxPage;

  beforeAll(async () => {
    sandbox = await startSandbox({ env: {}, port: 0, logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }) });
    page = sandboxPage(`http://127.0.0.1:${sandbox.port}`);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  it('answers a restart request with a card the on-call approvers decide, then streams the result', async () => {
    expect((await page.state()).workspace.demoModel).toBe(true);
    const posted = await page.post('/api/messages', { user: 'U0ALICE', channel: 'C0OPS', text: '@countersign restart the worker in staging' });
    const threadTs = posted.body.ts as string;
    const card = await page.waitFor((snapshot) => cardIn(snapshot, threadTs), 'the approval card');
    expect(JSON.stringify(card.blocks)).toContain('restart_service');

    // dave is in the channel but not in the example policy's approvers.
    await page.click({ user: 'U0DAVE', message: card, actionId: 'countersign_approve' });
    await page.waitFor((snapshot) => snapshot.ephemerals.find((ephemeral) => ephemeral.user === 'U0DAVE'), 'the refusal for dave');

    await page.click({ user: 'U0BOB', message: card, actionId: 'countersign_approve' });
    const answer = await page.waitFor(
      (snapshot) => repliesIn(snapshot, threadTs).find((message) => message.ts > card.ts && !message.streaming && message.text.includes('restarted')),
      'the answer from the tool output',
    );
    expect(answer.text).toContain('worker');
    expect(JSON.stringify(await page.state())).toContain(DEMO_MODEL_NOTICE.slice(1, 20));
  });
});
