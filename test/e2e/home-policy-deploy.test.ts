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
 * After a deploy that replaced a rule's approvers ([UBOB] → [U0LEAD]), nobody may approve a call
 * waiting from before it: a click is judged by the stricter of the card's policy and the config in
 * force (`governingPolicy`), and nobody is named by both. App Home lists by that same judgement, so
 * the fresh replica offers the call to neither Bob (the card's approver) nor the lead (the config's).
 * A Home view the old replica published before the deploy still has Bob's Approve: that click is the
 * first, so the decider closes the call as countersign's error ("nobody it names can approve this
 * request now"), and Bob must be told the policy changed and the request will not run, not ":x:
 * Denied." as if his click had denied it.
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

const publishesFor = (slack: FakeSlackApi, user: string) => slack.callsTo('views.publish').filter((call) => call.args.user_id === user);

/** Opens `user`'s Home tab on `h` and waits for the view it publishes. */
async function openHome(h: Harness, user: string): Promise<PublishedView> {
  const before = publishesFor(h.slack, user).length;
  await postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope: appHomeOpenedEnvelope({ user, teamId: TEAM_ID, botUserId: BOT_USER_ID }) });
  return (await waitFor(() => publishesFor(h.slack, user)[before], { message: `${user}'s Home` })).args.view as PublishedView;
}

const homeApprove = (view: PublishedView) => cardButtons(view.blocks).find((button) => button.actionId === 'countersign_home_approve');

describe('App Home after a deploy that leaves nobody able to approve a waiting call', () => {
  it('lists the call to nobody, and tells the approver who clicked a stale Approve that the policy changed, not that it was denied', async () => {
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
    // Bob's Home as the old replica published it, before the deploy: Bob may approve under its config.
    const staleHome = await openHome(old, 'UBOB');
    const staleApprove = homeApprove(staleHome);
    expect(staleApprove, 'the old replica offers Bob Approve').toBeDefined();
    running.splice(running.indexOf(old), 1);
    await old.stop();

    const fresh = await startHarness({ configYaml: rule('[U0LEAD]'), shared });
    running.push(fresh);
    // The fake Slack puts everyone in every channel: both are in the request's channel.
    const bobs = await openHome(fresh, 'UBOB');
    expect(homeApprove(bobs), 'the config in force no longer lets Bob approve, so Home does not offer it').toBeUndefined();
    expect(JSON.stringify(bobs.blocks)).not.toContain('restart_service');
    // Nor the lead: the card's policy still applies too, and names only Bob.
    const leads = await openHome(fresh, 'U0LEAD');
    expect(homeApprove(leads)).toBeUndefined();
    expect(JSON.stringify(leads.blocks)).not.toContain('restart_service');

    // The turn resumes with the call not run and asks the model again: scripted, so it does not sit
    // through the model client's retries of an unscripted call (2 s and 4 s) before failing.
    const answer = 'The restart was not run: nobody may approve it now.';
    fresh.openai.enqueue({ text: answer });
    const before = publishesFor(fresh.slack, 'UBOB').length;
    await postSlackInteraction({ url: fresh.eventsUrl, signingSecret: SIGNING_SECRET, payload: homeActionsPayload({ user: 'UBOB', view: { id: 'VHOME0001', ...staleHome }, teamId: TEAM_ID, ...staleApprove! }) });
    const after = (await waitFor(() => publishesFor(fresh.slack, 'UBOB')[before], { message: 'the Home view after the click' })).args.view as PublishedView;
    const notice = JSON.stringify(after.blocks[0]);
    await fresh.settled();
    expect(fresh.invocations()).toEqual([]);
    expect(threadReplies(fresh, threadTs).some((message) => message.text === answer)).toBe(true);
    // The card says "Not run: the approval policy changed since this card was posted and nobody it names can approve this request now".
    expect(JSON.stringify(fresh.slack.messages(CHANNEL, threadTs))).toContain('nobody it names can approve');
    // Bob clicked Approve: being told ":x: Denied." reads as if his click denied it.
    expect(notice).not.toContain(':x: Denied.');
    expect(notice).toContain('This request can no longer be approved: the approval policy changed since it was posted');
  }, 60_000);
});
