import { describe, expect, it } from 'vitest';
import { postSlackEvent } from '../helpers/signed-request.js';
import { SIGNING_SECRET, TEAM_ID, cardButtons, nextTs, startHarness, threadReplies, waitFor } from './harness.js';

const SRE_ONLY = `
policy:
  rules:
    - name: sre
      tools: [restart_service]
      approvers: [group:S0SRE]
`;

/**
 * Review (stop 6, a95048b): `claimTaken` counts a completing decision's claim for `worker.idle()`
 * from its write until `drainClaimed`. A stopping `idle()` hands back only the claims counted when
 * it starts; one taken while it already waits (a request that outlasted the stop's 10 s wait for
 * requests) is waited for until `drainClaimed`. A form submit (Deny with reason, Edit, Approve &
 * allow, Reply) records its decision BEFORE `ack()`: past Slack's 3 s Bolt has answered 404 and
 * the late `ack()` throws (ERR_HTTP_HEADERS_SENT), so `decider.publish` (and `drainClaimed`) is
 * never called. The claim stays counted for ever: `stop()` never returns (SIGKILL), the thread's
 * lock held meanwhile. Before a95048b the stop ended once the running turn did.
 */
describe('a form submit whose decision lands while the stop waits for a running turn', () => {
  it('does not keep the stop waiting for ever', async () => {
    const h = await startHarness({ extraYaml: SRE_ONLY });
    h.slack.setUsergroupUsers('S0SRE', ['UBOB']);
    let stopping: Promise<void> | undefined;
    const holds: Array<{ release: () => void }> = [];
    try {
      // Thread B: a call waiting for @sre; Bob opens "Deny with reason".
      h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } }] }, { text: 'Understood, not restarting.' });
      const threadB = nextTs();
      await h.mention({ user: 'UALICE', text: 'restart api in prod', ts: threadB });
      const card = await waitFor(() => threadReplies(h, threadB).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
      const denyReason = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_deny_reason')!;
      await h.click({ user: 'UBOB', cardTs: card.ts, threadTs: threadB, ...denyReason });
      const view = (await waitFor(() => h.slack.callsTo('views.open')[0], { message: 'views.open' })).args.view as { callback_id: string; private_metadata: string };
      // Slack says @sre changed: the next check asks Slack again (Tier 2, slow or rate-limited).
      const event = { type: 'subteam_members_changed', subteam_id: 'S0SRE', team_id: TEAM_ID, date_previous_update: 1, date_update: 2, added_users: ['UBOB'], added_users_count: 1, event_ts: '2.000001' };
      const envelope = { token: 'legacy', team_id: TEAM_ID, api_app_id: 'A0COUNTERSIGN', event, type: 'event_callback', event_id: `Ev${nextTs().replace('.', '')}`, event_time: 2, authorizations: [] };
      expect((await postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope })).status).toBe(200);
      await h.settled();
      const groups = h.slack.holdNext('usergroups.users.list');
      holds.push(groups);
      const submitted = h.submitView({ user: 'UBOB', view, values: { reason: { value: { type: 'plain_text_input', value: 'frozen' } } } }).catch(() => undefined);
      await groups.received;

      // Thread A: a turn running (its answer's post slow) when SIGTERM comes.
      h.openai.enqueue({ text: 'Pods are fine.' });
      const post = h.slack.holdNext('chat.postMessage');
      holds.push(post);
      const threadA = nextTs();
      await h.mention({ user: 'UCAROL', text: 'how are the pods?', ts: threadA });
      await post.received;

      stopping = h.bot.stop();
      let stopped = false;
      void stopping.then(() => (stopped = true), () => (stopped = true));
      // The stop's 10 s wait for Slack requests ends (Bob's submit is still checking @sre); it now waits for thread A's turn.
      await waitFor(() => h.warnings().some((line) => line.includes('stop-requests-unfinished')), { message: 'the stop past its wait for requests', timeoutMs: 20_000 });
      await submitted;
      // Slack answers about @sre: Bob's Deny is recorded (the step complete, its resume claimed by this process).
      groups.release();
      await waitFor(async () => (await h.auditEvents()).some((entry) => entry.type === 'decision'), { message: "Bob's deny recorded", timeoutMs: 20_000 });
      // Thread A's turn ends: nothing else the stop should wait for.
      post.release();
      const answeredA = await waitFor(() => threadReplies(h, threadA).length > 0, { message: 'thread A answered', timeoutMs: 10_000 }).catch(() => false);
      const outcome = await Promise.race([stopping.then(() => 'stopped'), new Promise<string>((resolve) => setTimeout(() => resolve('still stopping after 20 s'), 20_000))]);
      expect({ outcome, answeredA, events: h.warnings().map((line) => [JSON.parse(line).event, JSON.parse(line).err?.code].join(':')) }, 'worker.idle() waits for a claim whose drainClaimed never comes (the form listener threw at its late ack)').toMatchObject({ outcome: 'stopped' });
      expect(stopped).toBe(true);
    } finally {
      for (const hold of holds) hold.release();
      await h.slack.close();
      await h.openai.close();
    }
  }, 90_000);
});
