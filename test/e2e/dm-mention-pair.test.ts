import { describe, expect, it } from 'vitest';
import { appMentionEnvelope, messageEnvelope, postSlackEvent } from '../helpers/signed-request.js';
import { BOT_USER_ID, SIGNING_SECRET, TEAM_ID, nextTs, useHarnesses } from './harness.js';

const harness = useHarnesses();
const DM = 'D0ALICE01';
const ENTERPRISE = 'E0ORG1';
const OTHER_WORKSPACE = 'T0OTHER1';

/** Alice, of another workspace of the same Enterprise Grid org: only users.info can tell she is a member. */
function gridDelivery(envelope: object): object {
  const body = envelope as { enterprise_id?: string; event: Record<string, unknown> };
  body.enterprise_id = ENTERPRISE;
  body.event.team = OTHER_WORKSPACE;
  body.event.user_team = OTHER_WORKSPACE;
  return body;
}

describe('the app_mention + message.im pair of one DM that mentions the bot', () => {
  it('is not both refused ("send it again") and run', async () => {
    const h = await harness();
    h.openai.enqueue({ text: 'Pods are fine.' }, { text: 'second turn' });
    // users.info fails for the first of the two deliveries (a rate limit, a blip), answers for the second.
    let usersInfoCalls = 0;
    h.slack.setMethodHandler('users.info', (call) => {
      usersInfoCalls += 1;
      if (usersInfoCalls === 1) return { ok: false, error: 'fatal_error' };
      return { ok: true, user: { id: call.args.user, team_id: OTHER_WORKSPACE, enterprise_user: { enterprise_id: ENTERPRISE } } };
    });
    const ts = nextTs();
    const text = `<@${BOT_USER_ID}> how are the pods?`;
    // Slack sends both for one post in a DM: an app_mention and a message.im, each with its own event id.
    await postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope: gridDelivery(appMentionEnvelope({ user: 'UALICE', text, channel: DM, teamId: TEAM_ID, botUserId: BOT_USER_ID, ts, eventId: `EvMention${ts}` })) });
    const refusal = await h.slack.waitForCall('chat.postEphemeral');
    expect(String(refusal.args.text)).toContain('did not act on your message');
    await postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope: gridDelivery(messageEnvelope({ user: 'UALICE', text, channel: DM, channelType: 'im', ts, teamId: TEAM_ID, eventId: `EvIm${ts}` })) });
    // The barrier: both deliveries handled, no drain running, nothing queued.
    await h.settled();

    // Told "I did not act on your message… send it again", the post must not run (she will send it again, and it would run twice).
    expect({ toldNotTaken: true, modelAsked: h.openai.requests.length, answered: h.slack.messages(DM, ts).some((m) => m.text === 'Pods are fine.') }).toEqual({ toldNotTaken: true, modelAsked: 0, answered: false });
  });
});
