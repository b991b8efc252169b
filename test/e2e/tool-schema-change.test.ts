import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { watchBots } from '../helpers/bot-activity.js';
import { conversationOf, startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai.js';
import { startFakeSlackApi, type FakeSlackApi } from '../helpers/fake-slack-api.js';
import { BOT_USER_ID, TEAM_ID, cardButtons, nextTs, startHarness, threadReplies, waitFor, type Harness } from './harness.js';

/**
 * A deploy that changes a tool's parameters while a card waits: the bot that posted the card stops,
 * and the bot that starts with the new config (same Redis, same Slack) handles the click and the
 * resume. Before the fix the AI SDK checked the approved input against the new schema, refused it
 * as the model's own invalid input ("AI_InvalidToolInputError: … Approved tool input does not match
 * the validated schema output.") and the audit trail stopped at the decision.
 */
let world: { slack: FakeSlackApi; openai: FakeOpenAI; keyPrefix: string; logFile: string; watch: ReturnType<typeof watchBots> } | undefined;
const running: Harness[] = [];
afterEach(async () => {
  while (running.length > 0) await running.pop()?.stop();
  await world?.slack.close();
  await world?.openai.close();
  world = undefined;
});

async function deployWorld() {
  world = {
    slack: await startFakeSlackApi({ botUserId: BOT_USER_ID, teamId: TEAM_ID }),
    openai: await startFakeOpenAI(),
    keyPrefix: `e2e:schema:${Date.now()}:${Math.random()}:`,
    logFile: join(mkdtempSync(join(tmpdir(), 'countersign-schema-')), 'invocations.log'),
    watch: watchBots(),
  };
  const shared = world;
  return async (configYaml: string) => {
    const h = await startHarness({ configYaml, shared });
    running.push(h);
    return h;
  };
}

async function stop(h: Harness) {
  await h.settled();
  running.splice(running.indexOf(h), 1);
  await h.stop();
}

const RECORDER = join(import.meta.dirname, '../fixtures/record-invocation.mjs');
function restartToolYaml(logFile: string, extra: { parameter?: string; argv?: string[]; verb?: string[] } = {}) {
  const argv = JSON.stringify([process.execPath, RECORDER, logFile, ...(extra.verb ?? ['rollout', 'restart']), 'deployment/{service}', '-n', '{namespace}', ...(extra.argv ?? [])]);
  return `
instructions: You are a test ops bot.
tools:
  - name: restart_service
    description: Restart a deployment
    command: ${argv}
    parameters:
      service: { type: string, pattern: "[a-z0-9-]+" }
      namespace: { type: string, enum: [staging, prod] }
${extra.parameter ?? ''}
    approval: always
`;
}

describe('a deploy that changes the tool while a card waits', () => {
  it('a parameter added with a default: the approved call is reported as not run, in the audit trail too', { timeout: 30_000 }, async () => {
    const deploy = await deployWorld();
    const logFile = world!.logFile;
    const old = await deploy(restartToolYaml(logFile));
    old.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] });
    const threadTs = nextTs();
    await old.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
    const card = await waitFor(() => threadReplies(old, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await stop(old);

    // The new release adds --timeout with a default; the waiting call's input has no timeout.
    const fresh = await deploy(restartToolYaml(logFile, { parameter: '      timeout: { type: number, integer: true, default: 60 }', argv: ['--timeout={timeout}'] }));
    fresh.openai.enqueue({ text: 'The restart did not run: the tool changed. Ask me again if it is still needed.' });
    await fresh.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await waitFor(() => threadReplies(fresh, threadTs).some((message) => message.text?.startsWith('The restart did not run')), { message: 'the answer' });
    await fresh.settled();

    expect(fresh.invocations()).toEqual([]);
    // The model is told it did not run because the tool changed, not that its own input was invalid.
    const told = conversationOf(fresh.openai.requests.at(-1)!).find((message) => message.role === 'tool')?.text ?? '';
    expect(told).toContain('Not run: `restart_service` changed since it was approved (a deploy updated its definition), so nothing was run.');
    expect(told).not.toContain('Approved tool input does not match');
    expectCardSaysNotRun(fresh, { threadTs, cardTs: card.ts });
    // Closed when the resume was claimed, by countersign: on record as refused, and nothing started.
    await expectClosedAsChanged(fresh);
  });

  it('the command template changed (same name, description and parameters): the approval for the old command runs nothing', { timeout: 30_000 }, async () => {
    const deploy = await deployWorld();
    const logFile = world!.logFile;
    const old = await deploy(restartToolYaml(logFile));
    old.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] });
    const threadTs = nextTs();
    await old.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
    const card = await waitFor(() => threadReplies(old, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await stop(old);

    // The new release's restart_service deletes the deployment; the card still reads as before.
    const fresh = await deploy(restartToolYaml(logFile, { verb: ['delete'] }));
    fresh.openai.enqueue({ text: 'The restart did not run: the tool changed. Ask me again if it is still needed.' });
    await fresh.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await waitFor(() => threadReplies(fresh, threadTs).some((message) => message.text?.startsWith('The restart did not run')), { message: 'the answer' });
    await fresh.settled();

    // Bob approved `rollout restart deployment/worker -n prod`: neither that nor the delete ran.
    expect(fresh.invocations()).toEqual([]);
    const told = conversationOf(fresh.openai.requests.at(-1)!).find((message) => message.role === 'tool')?.text ?? '';
    expect(told).toContain('Not run: `restart_service` changed since it was approved (a deploy updated its definition), so nothing was run.');
    expectCardSaysNotRun(fresh, { threadTs, cardTs: card.ts });
    await expectClosedAsChanged(fresh);
  });

  it('the same config after a restart: the approved call runs as approved', { timeout: 30_000 }, async () => {
    const deploy = await deployWorld();
    const logFile = world!.logFile;
    const old = await deploy(restartToolYaml(logFile));
    old.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] });
    const threadTs = nextTs();
    await old.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
    const card = await waitFor(() => threadReplies(old, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await stop(old);

    const fresh = await deploy(restartToolYaml(logFile));
    fresh.openai.enqueue({ text: 'Restarted.' });
    await fresh.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    await waitFor(() => threadReplies(fresh, threadTs).some((message) => message.text === 'Restarted.'), { message: 'the answer' });
    await fresh.settled();

    expect(fresh.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'prod']]);
  });
});

/** Bob's click was taken, but the card must not go on saying "Approved by" a call that never ran. */
function expectCardSaysNotRun(h: Harness, { threadTs, cardTs }: { threadTs: string; cardTs: string }): void {
  const shown = JSON.stringify(threadReplies(h, threadTs).find((message) => message.ts === cardTs)?.blocks);
  expect(shown).toContain('changed since it was approved');
  expect(shown).not.toContain('Approved by');
}

async function expectClosedAsChanged(h: Harness): Promise<void> {
  const audit = (await h.auditEvents()).filter((event) => ['tool-started', 'tool-executed', 'action-refused'].includes(event.type));
  expect(audit).toEqual([expect.objectContaining({ type: 'action-refused', toolName: 'restart_service', userId: 'countersign', action: 'resume', code: 'tool-changed' })]);
}
