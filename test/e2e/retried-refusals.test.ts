import { describe, expect, it } from 'vitest';
import { appMentionEnvelope, postSlackEvent } from '../helpers/signed-request.js';
import { BOT_USER_ID, CHANNEL, SIGNING_SECRET, TEAM_ID, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();
const PARTNER_TEAM = 'T0PARTNER1';

/** An app_mention from an externally shared channel; `userTeam` undefined: the event names neither user_team nor team. */
function sharedChannelMention(options: { user: string; userTeam: string | undefined; ts: string; eventId: string; text: string }) {
  const envelope = appMentionEnvelope({ user: options.user, text: `<@${BOT_USER_ID}> ${options.text}`, channel: CHANNEL, teamId: TEAM_ID, botUserId: BOT_USER_ID, ts: options.ts, eventId: options.eventId }) as {
    is_ext_shared_channel: boolean;
    event: Record<string, unknown>;
  };
  envelope.is_ext_shared_channel = true;
  delete envelope.event.team;
  if (options.userTeam !== undefined) {
    envelope.event.user_team = options.userTeam;
    envelope.event.team = options.userTeam;
  }
  return envelope;
}

describe('Slack retries of a mention the bot refuses', () => {
  it("tells a partner's person and audits the refusal once, not once per delivery", async () => {
    const h = await harness();
    const ts = nextTs();
    const envelope = sharedChannelMention({ user: 'UPARTNER1', userTeam: PARTNER_TEAM, ts, eventId: `EvPartner${ts}`, text: 'restart payments-api in prod' });
    await postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope });
    await h.slack.waitForCall('chat.postEphemeral');
    // Slack did not see the 200 in time and sends the same event again.
    await postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope, retryNum: 1, retryReason: 'http_timeout' });
    await h.settled();

    const refusals = (await h.auditEvents()).filter((event) => event.type === 'action-refused');
    expect({ ephemerals: h.slack.callsTo('chat.postEphemeral').length, refusals: refusals.length }).toEqual({ ephemerals: 1, refusals: 1 });
  });

  it('does not tell our member "I did not act on your message, send it again" and then act on it from the retry', async () => {
    const h = await harness();
    h.openai.enqueue({ text: 'Restarted nothing, just answering.' }, { text: 'second turn' });
    // users.info is down for the first delivery, back for Slack's retry.
    let usersInfoCalls = 0;
    h.slack.setMethodHandler('users.info', (call) => {
      usersInfoCalls += 1;
      if (usersInfoCalls === 1) return { ok: false, error: 'fatal_error' };
      return { ok: true, user: { id: call.args.user, team_id: TEAM_ID } };
    });
    const ts = nextTs();
    const envelope = sharedChannelMention({ user: 'UALICE', userTeam: undefined, ts, eventId: `EvUnverified${ts}`, text: 'how are the pods?' });
    await postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope });
    const refusal = await h.slack.waitForCall('chat.postEphemeral');
    expect(String(refusal.args.text)).toContain('did not act on your message');
    await postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope, retryNum: 1, retryReason: 'http_timeout' });
    await h.settled();

    // Either the request is taken (and Alice was not told it was not) or it is not taken: not both.
    expect({ toldNotTaken: true, answered: threadReplies(h, ts).length > 0, modelAsked: h.openai.requests.length }).toEqual({ toldNotTaken: true, answered: false, modelAsked: 0 });

    // She sends it again, as told: that message runs, once.
    const again = nextTs();
    await postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope: sharedChannelMention({ user: 'UALICE', userTeam: undefined, ts: again, eventId: `EvUnverified${again}`, text: 'how are the pods?' }) });
    await waitFor(() => threadReplies(h, again).length > 0, { message: 'the answer to the message sent again' });
    await h.settled();
    expect({ answers: threadReplies(h, again).map((message) => message.text), modelAsked: h.openai.requests.length }).toEqual({ answers: ['Restarted nothing, just answering.'], modelAsked: 1 });
  });
});
