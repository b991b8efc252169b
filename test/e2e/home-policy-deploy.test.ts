import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { watchBots } from '../helpers/bot-activity.js';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fake-openai.js';
import { startFakeSlackApi, type FakeSlackApi } from '../helpers/fake-slack-api.js';
import { appHomeOpenedEnvelope, homeActionsPayload, postSlackEvent, postSlackInteraction } from '../helpers/signed-request.js';
import { BOT_USER_ID, CHANNEL, SIGNING_SECRET, TEAM_ID, cardButtons, nextTs, recordingToolsYaml, startHarness, threadReplies, waitFor, type Harness } from './harness.js';

/**
 * After a deploy that replaced a rule's approvers, App Home still lists the waiting call by the
 * card's stored policy (as the README says) and offers Approve. Bob's Approve from Home is the first
 * click, so the decider closes the call as countersign's error ("nobody it names can approve this
 * request now"): a recorded `denied` decision by countersign, not by Bob. Bob must be told the policy
 * changed and the request will not run, not ":x: Denied." as if his click had denied it.
 */
let world: { slack: FakeSlackApi; openai: FakeOpenAI; watch: ReturnType<typeof watchBots> } | undefined;
const running: Harness[] = [];
afterEach(async () => {
  while (running.length > 0) await running.pop()?.stop();
  await world?.slack.close();
  await world?.openai.close();
  world = undefined;
});

type PublishedView = { type: string; blocks: any[] };

describe('App Home after a deploy that leaves nobody able to approve a waiting call', () => {
  it('tells the approver who clicked Approve that the policy changed, not that it was denied', async () => {
    world = { slack: await startFakeSlackApi({ botUserId: BOT_USER_ID, teamId: TEAM_ID }), openai: await startFakeOpenAI(), watch: watchBots() };
    const logFile = join(mkdtempSync(join(tmpdir(), 'countersign-home-policy-')), 'invocations.log');
    const shared = { ...world, keyPrefix: `e2e:home-policy:${Date.now()}:${Math.random()}:`, logFile };
    const rule = (approvers: string) => `${recordingToolsYaml(logFile)}
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      approvers: ${approvers}
`;
    const old = await startHarness({ configYaml: rule('[UBOB]'), shared });
    running.push(old);
    old.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] });
    const threadTs = nextTs();
    await old.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
    await waitFor(() => threadReplies(old, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    await old.settled();
    running.splice(running.indexOf(old), 1);
    await old.stop();

    const fresh = await startHarness({ configYaml: rule('[U0LEAD]'), shared });
    running.push(fresh);
    const publishes = () => fresh.slack.callsTo('views.publish').filter((call) => call.args.user_id === 'UBOB');
    await postSlackEvent({ url: fresh.eventsUrl, signingSecret: SIGNING_SECRET, envelope: appHomeOpenedEnvelope({ user: 'UBOB', teamId: TEAM_ID, botUserId: BOT_USER_ID }) });
    const home = (await waitFor(() => publishes()[0], { message: "Bob's Home" })).args.view as PublishedView;
    const approve = cardButtons(home.blocks).find((button) => button.actionId === 'countersign_home_approve');
    expect(approve, 'Home lists by the card policy, so Bob is offered Approve').toBeDefined();

    await postSlackInteraction({ url: fresh.eventsUrl, signingSecret: SIGNING_SECRET, payload: homeActionsPayload({ user: 'UBOB', view: { id: 'VHOME0001', ...home }, teamId: TEAM_ID, ...approve! }) });
    const after = (await waitFor(() => publishes()[1], { message: 'the Home view after the click' })).args.view as PublishedView;
    const notice = JSON.stringify(after.blocks[0]);
    await fresh.settled();
    expect(fresh.invocations()).toEqual([]);
    // The card says "Not run: the approval policy changed since this card was posted and nobody it names can approve this request now".
    expect(JSON.stringify(fresh.slack.messages(CHANNEL, threadTs))).toContain('nobody it names can approve');
    // Bob clicked Approve: being told ":x: Denied." reads as if his click denied it.
    expect(notice).not.toContain(':x: Denied.');
    expect(notice).toContain('This request can no longer be approved: the approval policy changed since it was posted');
  }, 60_000);
});
