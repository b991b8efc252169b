import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { watchBots } from '../helpers/bot-activity.js';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai.js';
import { startFakeSlackApi, type FakeSlackApi } from '../helpers/fake-slack-api.js';
import { fillForm } from './fill-form.js';
import { BOT_USER_ID, CHANNEL, TEAM_ID, cardButtons, nextTs, recordingToolsYaml, startHarness, threadReplies, waitFor, type Harness } from './harness.js';

/**
 * A deploy that changes countersign.yml while a card waits: bots with the old and the new config
 * share one Redis and one Slack, as replicas do during and after a rolling deploy.
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
    keyPrefix: `e2e:policy-deploy:${Date.now()}:${Math.random()}:`,
    logFile: join(mkdtempSync(join(tmpdir(), 'countersign-policy-deploy-')), 'invocations.log'),
    watch: watchBots(),
  };
  const shared = world;
  const deploy = async (configYaml: string, options: { now?: () => number; sweepIntervalMs?: number } = {}) => {
    const h = await startHarness({ configYaml, shared, ...options });
    running.push(h);
    return h;
  };
  return { deploy, logFile: shared.logFile };
}

async function stop(h: Harness) {
  await h.settled();
  running.splice(running.indexOf(h), 1);
  await h.stop();
}

const ephemerals = (h: Harness) => h.slack.callsTo('chat.postEphemeral').map((call) => ({ user: String(call.args.user), text: String(call.args.text) }));

async function pausedCall(h: Harness) {
  h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] });
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
  const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
  const button = (actionId: string) => cardButtons(card.blocks).find((candidate) => candidate.actionId === actionId)!;
  const cardText = (via: Harness) => JSON.stringify(via.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)?.blocks);
  return { threadTs, card, approve: button('countersign_approve'), edit: button('countersign_edit'), cardText };
}

describe('a deploy that tightens the policy while a card waits', () => {
  it('an approver the new config no longer names cannot approve the waiting call after the deploy', async () => {
    const { deploy, logFile } = await deployWorld();
    const rule = (approvers: string) => `${recordingToolsYaml(logFile)}
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      approvers: ${approvers}
`;
    const old = await deploy(rule('[UBOB, U0LEAD]'));
    const call = await pausedCall(old);
    await stop(old);

    // Bob is taken off the rule (he left the on-call rota); only the lead may approve now.
    const fresh = await deploy(rule('[U0LEAD]'));
    fresh.openai.enqueue({ text: 'Restarted.' });
    await fresh.click({ user: 'UBOB', cardTs: call.card.ts, threadTs: call.threadTs, ...call.approve });
    await fresh.settled();
    // Under the config now deployed Bob may not approve prod restarts; the restart must not run on his word.
    expect(fresh.invocations()).toEqual([]);
    const refusal = await waitFor(() => ephemerals(fresh).find((message) => message.user === 'UBOB'), { message: "Bob's refusal" });
    expect(refusal.text).toBe('Only <@U0LEAD> can approve this under the approval policy now in force, which changed since the card was posted, so nothing changed.');
    expect(call.cardText(fresh)).not.toContain('Approved by');

    // The lead still can.
    await fresh.click({ user: 'U0LEAD', cardTs: call.card.ts, threadTs: call.threadTs, ...call.approve });
    await waitFor(() => threadReplies(fresh, call.threadTs).some((message) => message.text === 'Restarted.'), { message: 'the answer' });
    expect(fresh.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'prod']]);
  });

  it('a quorum raised from 1 to 2 by the new config applies to the waiting call', async () => {
    const { deploy, logFile } = await deployWorld();
    const rule = (required: number) => `${recordingToolsYaml(logFile)}
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      approvers: [UBOB, U0LEAD]
      required: ${required}
`;
    const old = await deploy(rule(1));
    const call = await pausedCall(old);
    await stop(old);

    const fresh = await deploy(rule(2));
    fresh.openai.enqueue({ text: 'Restarted.' });
    await fresh.click({ user: 'UBOB', cardTs: call.card.ts, threadTs: call.threadTs, ...call.approve });
    await fresh.settled();
    expect(fresh.invocations()).toEqual([]);

    // The second approver makes the quorum the new config asks for.
    await fresh.click({ user: 'U0LEAD', cardTs: call.card.ts, threadTs: call.threadTs, ...call.approve });
    await waitFor(() => threadReplies(fresh, call.threadTs).some((message) => message.text === 'Restarted.'), { message: 'the answer' });
    expect(fresh.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'prod']]);
  });
});

describe('a deploy that shortens the expiry of the rule a card waits under', () => {
  it('an Approve past the expiry now in force is refused, closes the card as expired and runs nothing', async () => {
    const { deploy, logFile } = await deployWorld();
    const rule = (expiry: string) => `${recordingToolsYaml(logFile)}
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      approvers: [UBOB]
      expiry: ${expiry}
`;
    const requestedAt = Date.UTC(2026, 10, 21, 12, 0);
    const clock = { now: requestedAt };
    // No sweep in between: the stored deadline (24h) is far off, so only the click can close it.
    const timing = { now: () => clock.now, sweepIntervalMs: 3_600_000 };
    const old = await deploy(rule('24h'), timing);
    const call = await pausedCall(old);
    await stop(old);

    const fresh = await deploy(rule('15m'), timing);
    clock.now = requestedAt + 2 * 60 * 60_000;
    await fresh.click({ user: 'UBOB', cardTs: call.card.ts, threadTs: call.threadTs, ...call.approve });
    const refusal = await waitFor(() => ephemerals(fresh).find((message) => message.user === 'UBOB'), { message: "Bob's refusal" });
    expect(refusal.text).toContain('This request expired before you acted');
    await waitFor(() => call.cardText(fresh).includes('Expired without a decision'), { message: 'the card marked expired' });
    await waitFor(() => threadReplies(fresh, call.threadTs).some((message) => message.text.includes('expired without a decision, so nothing was run')), { message: 'expiry notice' });
    await fresh.settled();
    expect(fresh.invocations()).toEqual([]);
    const audit = await fresh.auditEvents();
    expect(audit.filter((event) => event.type === 'expired')).toHaveLength(1);
    expect(audit.some((event) => event.type === 'decision' && event.outcome === 'approved')).toBe(false);
  });
});

describe('a rolling deploy: a replica still on the old config handles a click on a card the new config made', () => {
  it('an Edit submitted to an old replica does not lower the bar the card was created with', async () => {
    const { deploy, logFile } = await deployWorld();
    // Old release: any channel member may approve prod restarts. New release: two leads must.
    const lax = recordingToolsYaml(logFile);
    const strict = `${recordingToolsYaml(logFile)}
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      input: [{ field: namespace, equals: prod }]
      approvers: [U0LEAD1, U0LEAD2]
      required: 2
`;
    const oldReplica = await deploy(lax);
    const newReplica = await deploy(strict);
    const call = await pausedCall(newReplica);
    expect(call.cardText(newReplica)).toContain('2 approvals needed');
    newReplica.openai.enqueue({ text: 'Restarted.' });
    // One lead edits the service name through the old replica.
    await oldReplica.click({ user: 'U0LEAD1', cardTs: call.card.ts, threadTs: call.threadTs, ...call.edit });
    const view = (await waitFor(() => oldReplica.slack.callsTo('views.open').at(-1), { message: 'views.open' })).args.view as { callback_id: string; private_metadata: string; blocks: any[] };
    const response = await oldReplica.submitView({ user: 'U0LEAD1', view, values: fillForm(view, { Service: 'worker-2' }) });
    expect(response.status).toBe(200);
    await oldReplica.settled();
    // Still a prod restart: it needed two leads when the card was posted, and it still does under the config being rolled out.
    expect(oldReplica.invocations()).toEqual([]);
    const notice = await waitFor(() => ephemerals(oldReplica).find((message) => message.user === 'U0LEAD1'), { message: "the editor's notice" });
    expect(notice.text).toContain('your approval of it counts (1 of 2)');

    // The other lead's approval of the edited version runs it.
    const edited = await waitFor(() => threadReplies(newReplica, call.threadTs).find((message) => message.ts === call.card.ts && JSON.stringify(message.blocks).includes('worker-2')), { message: 'the edited card' });
    const approveEdited = cardButtons(edited.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await newReplica.click({ user: 'U0LEAD2', cardTs: call.card.ts, threadTs: call.threadTs, ...approveEdited });
    await waitFor(() => threadReplies(newReplica, call.threadTs).some((message) => message.text === 'Restarted.'), { message: 'the answer' });
    expect(newReplica.invocations()).toEqual([['rollout', 'restart', 'deployment/worker-2', '-n', 'prod']]);
  });
});
