import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { watchBots } from '../helpers/bot-activity.js';
import { conversationOf, startFakeOpenAI } from '../helpers/fake-openai.js';
import { startFakeSlackApi } from '../helpers/fake-slack-api.js';
import { markerWriteFailsOnce } from '../helpers/marker-write-fails-once.js';
import { BOT_USER_ID, CHANNEL, TEAM_ID, cardButtons, nextTs, recordingToolsYaml, startHarness, threadReplies, waitFor, type Harness, type HarnessOptions } from './harness.js';
import type { ApprovalHookOption } from '../../src/index.js';

let world: NonNullable<HarnessOptions['shared']> | undefined;
const running: Harness[] = [];
afterEach(async () => {
  while (running.length > 0) await running.pop()?.stop();
  await world?.slack.close();
  await world?.openai.close();
  world = undefined;
});

const stagingHook: ApprovalHookOption = {
  name: 'staging-only',
  decide: ({ input }) => ((input as { namespace: string }).namespace === 'staging' ? { decision: 'approve' } : undefined),
};
const FORBIDDEN = `
policy:
  rules:
    - name: restarts are for people
      tools: [restart_service]
      autoApprove: forbidden
`;
const staging = { name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } };
const prod = { name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } };

async function startWorld() {
  world = {
    slack: await startFakeSlackApi({ botUserId: BOT_USER_ID, teamId: TEAM_ID }),
    openai: await startFakeOpenAI(),
    keyPrefix: `e2e:hook-deploy:${Date.now()}:${Math.random()}:`,
    logFile: join(mkdtempSync(join(tmpdir(), 'countersign-hook-deploy-')), 'invocations.log'),
    watch: watchBots(),
  };
  return world;
}

async function start(options: HarnessOptions): Promise<Harness> {
  const h = await startHarness(options);
  running.push(h);
  return h;
}

/** Stops the replica of the old config: the deploy. */
async function retire(h: Harness): Promise<void> {
  await h.settled();
  running.splice(running.indexOf(h), 1);
  await h.stop();
}

/** A card on which the hook approved the staging restart while the prod one waits for a person. */
async function cardWithHookApproval(h: Harness) {
  h.openai.enqueue({ toolCalls: [staging, prod] });
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'restart the worker in staging and the api in prod', ts: threadTs });
  const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'a card with buttons' });
  expect(JSON.stringify(card.blocks)).toContain('Approved by policy hook `staging-only`');
  const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
  return { threadTs, card, approveProd: (by: Harness) => by.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve }) };
}

const toolResults = (h: Harness) =>
  conversationOf(h.openai.requests.at(-1)!)
    .filter((message) => message.role === 'tool')
    .map((message) => message.text ?? '')
    .join('\n');

/**
 * The card's policy and the config in force both govern every resume: a hook's approval given
 * under the old config holds only if the config in force still lets that hook decide the call.
 * When it does not, the call is closed by countersign (an error, not anyone's denial), on the card
 * and in the audit trail; the call a person approved runs.
 */
describe('a hook approval on a waiting card, then a deploy that no longer lets the hook decide it', () => {
  it('does not run the hook-approved call under a config that says autoApprove: forbidden', async () => {
    const shared = await startWorld();
    const old = await start({ configYaml: recordingToolsYaml(shared.logFile), shared, onApprovalRequest: stagingHook });
    const { threadTs, card, approveProd } = await cardWithHookApproval(old);
    await retire(old);

    const fresh = await start({ configYaml: `${recordingToolsYaml(shared.logFile)}${FORBIDDEN}`, shared, onApprovalRequest: stagingHook });
    fresh.openai.enqueue({ text: 'Done.' });
    await approveProd(fresh);
    await waitFor(() => threadReplies(fresh, threadTs).some((message) => message.text === 'Done.'), { message: 'the answer' });
    await fresh.settled();
    expect(fresh.invocations()).toEqual([['rollout', 'restart', 'deployment/api', '-n', 'prod']]);
    const told = toolResults(fresh);
    expect(told).toContain('the approval by the policy hook staging-only no longer holds (the policy rule forbids automatic approval of this tool under the approval policy now in force');
    expect(told).toContain('This was an error, not a decision');
    const now = fresh.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
    expect(JSON.stringify(now.blocks)).toContain('Not run');
    const refusals = (await fresh.auditEvents()).filter((event) => event.type === 'action-refused');
    expect(refusals).toEqual([expect.objectContaining({ userId: 'hook:staging-only', code: 'approval-revoked', action: 'resume', toolName: 'restart_service' })]);
  });

  it('does not run it once the hook is no longer configured', async () => {
    const shared = await startWorld();
    const old = await start({ configYaml: recordingToolsYaml(shared.logFile), shared, onApprovalRequest: stagingHook });
    const { threadTs, approveProd } = await cardWithHookApproval(old);
    await retire(old);

    const fresh = await start({ configYaml: recordingToolsYaml(shared.logFile), shared });
    fresh.openai.enqueue({ text: 'Done.' });
    await approveProd(fresh);
    await waitFor(() => threadReplies(fresh, threadTs).some((message) => message.text === 'Done.'), { message: 'the answer' });
    await fresh.settled();
    expect(fresh.invocations()).toEqual([['rollout', 'restart', 'deployment/api', '-n', 'prod']]);
    expect(toolResults(fresh)).toContain('the approval by the policy hook staging-only no longer holds (no approval hook is configured now)');
  });

  it('still runs it when the hook and a rule that lets it approve are in force', async () => {
    const shared = await startWorld();
    const old = await start({ configYaml: recordingToolsYaml(shared.logFile), shared, onApprovalRequest: stagingHook });
    const { threadTs, approveProd } = await cardWithHookApproval(old);
    await retire(old);

    const fresh = await start({ configYaml: recordingToolsYaml(shared.logFile), shared, onApprovalRequest: stagingHook });
    fresh.openai.enqueue({ text: 'Done.' });
    await approveProd(fresh);
    await waitFor(() => threadReplies(fresh, threadTs).some((message) => message.text === 'Done.'), { message: 'the answer' });
    await fresh.settled();
    // The two calls run at once: in either order.
    expect(fresh.invocations().toSorted()).toEqual([
      ['rollout', 'restart', 'deployment/api', '-n', 'prod'],
      ['rollout', 'restart', 'deployment/worker', '-n', 'staging'],
    ]);
  });
});

describe('Try again of a turn that failed before a hook-approved call started, after a deploy', () => {
  /** The hook decides the only call: the turn resumes at once, its marker cannot be written, and the model request fails. */
  async function failedAfterHookApproval(shared: NonNullable<HarnessOptions['shared']>) {
    const old = await start({ configYaml: recordingToolsYaml(shared.logFile), shared, onApprovalRequest: stagingHook, wrapStore: markerWriteFailsOnce });
    old.openai.enqueue({ toolCalls: [staging] }, { error: { status: 400, message: 'model exploded' } });
    const threadTs = nextTs();
    await old.mention({ user: 'UALICE', text: 'restart the worker in staging', ts: threadTs });
    const notice = await waitFor(() => threadReplies(old, threadTs).find((message) => message.text.includes('could not finish')), { timeoutMs: 10_000, message: 'failure notice' });
    expect(old.invocations()).toEqual([]);
    await retire(old);
    const retry = cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry')!;
    return { threadTs, clickTryAgain: (by: Harness) => by.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...retry }) };
  }

  it('does not run the call when the config in force forbids automatic approval of its tool', async () => {
    const shared = await startWorld();
    const { threadTs, clickTryAgain } = await failedAfterHookApproval(shared);
    const fresh = await start({ configYaml: `${recordingToolsYaml(shared.logFile)}${FORBIDDEN}`, shared, onApprovalRequest: stagingHook });
    fresh.openai.enqueue({ text: 'Not restarted.' });
    await clickTryAgain(fresh);
    await waitFor(() => threadReplies(fresh, threadTs).some((message) => message.text === 'Not restarted.'), { timeoutMs: 10_000, message: 'answer after retry' });
    await fresh.settled();
    const told = toolResults(fresh);
    expect(fresh.invocations(), `the model was told: ${told}`).toEqual([]);
    expect(told).toContain('the approval by the policy hook staging-only no longer holds');
    const refusals = (await fresh.auditEvents()).filter((event) => event.type === 'action-refused');
    expect(refusals).toEqual([expect.objectContaining({ userId: 'hook:staging-only', code: 'approval-revoked', action: 'retry' })]);
  }, 30_000);

  it('runs it when the hook and a rule that lets it approve are still in force', async () => {
    const shared = await startWorld();
    const { threadTs, clickTryAgain } = await failedAfterHookApproval(shared);
    const fresh = await start({ configYaml: recordingToolsYaml(shared.logFile), shared, onApprovalRequest: stagingHook });
    fresh.openai.enqueue({ text: 'Restarted.' });
    await clickTryAgain(fresh);
    await waitFor(() => threadReplies(fresh, threadTs).some((message) => message.text === 'Restarted.'), { timeoutMs: 10_000, message: 'answer after retry' });
    await fresh.settled();
    expect(fresh.invocations(), `the model was told: ${toolResults(fresh)}`).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'staging']]);
  }, 30_000);
});
