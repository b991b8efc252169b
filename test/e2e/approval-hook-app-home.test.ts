import { describe, expect, it } from 'vitest';
import type { ApprovalHookRequest } from '../../src/index.js';
import { appHomeOpenedEnvelope, homeActionsPayload, postSlackEvent, postSlackInteraction } from '../helpers/signed-request.js';
import { BOT_USER_ID, cardButtons, nextTs, SIGNING_SECRET, TEAM_ID, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

/** The approval hook decides before anyone else: App Home, which lists a step as soon as it is stored, must not race it. */
const harness = useHarnesses();

const BOB_ONLY = 'policy:\n  rules:\n    - name: restarts\n      tools: [restart_service]\n      approvers: [UBOB]\n';

type PublishedView = { type: string; blocks: any[] };
const publishesFor = (h: Harness, user: string) => h.slack.callsTo('views.publish').filter((call) => call.args.user_id === user);
async function nextHome(h: Harness, user: string, action: () => Promise<unknown>): Promise<PublishedView> {
  const before = publishesFor(h, user).length;
  await action();
  const call = await waitFor(() => publishesFor(h, user)[before], { message: `a Home view for ${user}` });
  return call.args.view as PublishedView;
}
const openHome = (h: Harness, user: string) =>
  nextHome(h, user, () => postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope: appHomeOpenedEnvelope({ user, teamId: TEAM_ID, botUserId: BOT_USER_ID }) }));
const clickHome = (h: Harness, user: string, view: PublishedView, button: { actionId: string; value: string }) =>
  nextHome(h, user, () => postSlackInteraction({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, payload: homeActionsPayload({ user, view: { id: 'VHOME0001', ...view }, teamId: TEAM_ID, ...button }) }));
const homeApprove = (view: PublishedView) => cardButtons(view.blocks).find((button) => button.actionId === 'countersign_home_approve');
const cardOf = (h: Harness, threadTs: string) => threadReplies(h, threadTs).find((message) => JSON.stringify(message.blocks ?? []).includes('restart_service'));

/** A hook that answers only when the test lets it (a change-calendar lookup that takes a few seconds). */
function heldHook(answer: () => { decision: 'deny'; reason: string } | undefined) {
  let asked!: (request: ApprovalHookRequest) => void;
  const request = new Promise<ApprovalHookRequest>((resolve) => (asked = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const decide = async (given: ApprovalHookRequest) => {
    asked(given);
    await released;
    return answer();
  };
  return { decide, request, release };
}

/** Alice's restart in prod; resolves once the hook has been asked (the step is stored by then). */
async function requestRestart(h: Harness, hook: ReturnType<typeof heldHook>) {
  // An earlier answer in the channel, so the fake workspace lists Bob in it (users.conversations).
  h.openai.enqueue({ text: 'Hello.' });
  const helloTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'hello', ts: helloTs });
  await waitFor(() => threadReplies(h, helloTs).some((message) => message.text === 'Hello.'), { message: 'hello' });
  await h.settled();
  h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: 'Done.' });
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
  return { threadTs, request: await hook.request };
}

describe('onApprovalRequest and App Home', () => {
  it("the hook's deny holds against an Approve from App Home while the hook is still deciding", async () => {
    const hook = heldHook(() => ({ decision: 'deny', reason: 'change freeze until Monday' }));
    const h = await harness({ extraYaml: BOB_ONLY, onApprovalRequest: { name: 'change-freeze', timeoutMs: 20_000, decide: hook.decide } });
    const { threadTs, request } = await requestRestart(h, hook);

    // Bob opens his Home tab while the hook decides, and clicks Approve: on what his tab shows, or on
    // a button a tab published earlier (or by a replica of an older version) still offers.
    const home = await openHome(h, 'UBOB');
    const listed = homeApprove(home);
    const approve = { actionId: 'countersign_home_approve', value: `${request.stepId}:${request.approvalId}:v0` };
    const answered = await clickHome(h, 'UBOB', home, approve);

    hook.release();
    await waitFor(() => cardOf(h, threadTs), { message: 'the card' });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Done.'), { message: 'the answer' });
    await h.settled();
    // The operator's veto (a change freeze) holds: nothing ran, and the card says who decided.
    expect(h.invocations()).toEqual([]);
    expect(JSON.stringify(cardOf(h, threadTs)!.blocks)).toContain('policy hook `change-freeze`');
    expect(listed, 'App Home does not offer the call while the hook decides').toBeUndefined();
    expect(JSON.stringify(answered.blocks)).toContain('A policy check is still running on this request, so nothing changed; try again in a moment.');
    const audit = await h.auditEvents();
    expect(audit.filter((event) => event.type === 'decision')).toEqual([expect.objectContaining({ outcome: 'denied', userId: 'hook:change-freeze', reason: 'change freeze until Monday' })]);
    expect(audit).toContainEqual(expect.objectContaining({ type: 'action-refused', userId: 'UBOB', action: 'approve', code: 'hook-deciding' }));
  }, 30_000);

  it('a call the hook leaves to people is on App Home as soon as the hook is done, and approving it there runs it', async () => {
    const hook = heldHook(() => undefined);
    const h = await harness({ extraYaml: BOB_ONLY, onApprovalRequest: { name: 'change-freeze', timeoutMs: 20_000, decide: hook.decide } });
    const { threadTs } = await requestRestart(h, hook);
    hook.release();
    await waitFor(() => cardButtons(cardOf(h, threadTs)?.blocks).length > 0, { message: 'the card with buttons' });

    const home = await openHome(h, 'UBOB');
    const approve = homeApprove(home);
    expect(approve, 'listed once the hook is done').toBeDefined();
    await clickHome(h, 'UBOB', home, approve!);
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Done.'), { message: 'the answer' });
    await h.settled();
    expect(h.invocations()).toEqual([['rollout', 'restart', 'deployment/worker', '-n', 'prod']]);
  }, 30_000);
});
