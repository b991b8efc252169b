import { describe, expect, it } from 'vitest';
import { type RecordedSlackCall, startFakeSlackApi } from '../helpers/fake-slack-api.js';
import { startFlakySlackEdge } from '../helpers/flaky-slack-edge.js';
import { BOT_USER_ID, CHANNEL, TEAM_ID, cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();
const APPROVALS = 'C0APPROVALS';
const MINUTE = 60_000;

/**
 * A rule's reminder (50 minutes before its expiry: 10 minutes in) goes in the thread and under the #approvals copy. The sweep that finds it due
 * took it off the schedule before posting it, so a post Slack failed (a 500, the network) was only
 * logged: that reminder was never sent there.
 */
const REMINDED = `
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      approvers: [U0OPS1]
      expiry: 1h
      reminder: 50m
      notify: { channels: [${APPROVALS}] }
`;

const REMINDER = 'Approval still needed';
const restart = { name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } };
const isReminder = (call: RecordedSlackCall) => String(call.args.text).includes(REMINDER);
const remindersIn = (h: Harness, channel: string, threadTs: string) => h.slack.messages(channel, threadTs).filter((message) => message.text.includes(REMINDER));
const reminderPosts = (h: Harness) => h.slack.callsTo('chat.postMessage').filter(isReminder);

/**
 * A request waiting on its card in the thread and its copy in #approvals, both on record; the clock at its creation.
 * The copy is in Slack a moment before the bot records it: a clock moved on in between had the sweep read
 * a step with no copy, remind only the thread and be done (these tests timed out under load that way).
 */
async function waitingRequest(h: Harness) {
  h.openai.enqueue({ toolCalls: [restart] }, { text: 'Restarted.' });
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
  await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'the card' });
  const copy = await waitFor(() => h.slack.messages(APPROVALS).find((message) => cardButtons(message.blocks).length > 0), { message: 'the copy in #approvals' });
  // The turn that posted the copy recorded it before its drain ended.
  await h.settled();
  return { threadTs, copyTs: copy.ts };
}

describe('a reminder Slack did not take', () => {
  it('is posted by a later sweep where Slack failed with a 500, and not again where it was posted', async () => {
    let clock = Date.UTC(2026, 10, 21, 12, 0);
    const h = await harness({ extraYaml: REMINDED, now: () => clock, sweepIntervalMs: 20 });
    const { threadTs, copyTs } = await waitingRequest(h);
    let failed = 0;
    h.slack.failWhen('chat.postMessage', (call) => isReminder(call) && call.args.channel === APPROVALS && failed++ === 0, { status: 500 });

    clock += 11 * MINUTE;
    // What the bot logged goes with a timeout: this wait timed out in two suites run side by side (once each), never alone.
    await waitFor(() => remindersIn(h, CHANNEL, threadTs).length === 1 && failed === 1, { message: 'the reminder in the thread, and the failed one under the copy' }).catch((error: Error) => {
      throw new Error(`${error.message} (failed ${failed}, in the thread ${remindersIn(h, CHANNEL, threadTs).length}); warnings:\n${h.warnings().join('\n')}`);
    });
    await h.settled({ sweep: true });
    expect(remindersIn(h, APPROVALS, copyTs)).toHaveLength(0);

    clock += 5 * MINUTE;
    await waitFor(() => remindersIn(h, APPROVALS, copyTs).length === 1, { message: `the reminder under the copy, tried again; warnings:\n${h.warnings().join('\n')}` });
    clock += 30 * MINUTE;
    await h.settled({ sweep: true });
    expect(remindersIn(h, CHANNEL, threadTs)).toHaveLength(1);
    expect(remindersIn(h, APPROVALS, copyTs)).toHaveLength(1);
  });

  it('is not posted again when Slack posted it but its reply was lost (a 502 from the edge)', async () => {
    let clock = Date.UTC(2026, 10, 21, 12, 0);
    const slack = await startFakeSlackApi({ botUserId: BOT_USER_ID, teamId: TEAM_ID });
    const edge = await startFlakySlackEdge(slack, { method: 'chat.postMessage', lost: 'bad-gateway', matches: (form) => (form.get('text') ?? '').includes(REMINDER) });
    try {
      const h = await harness({ extraYaml: REMINDED, now: () => clock, sweepIntervalMs: 20, environment: { SLACK_API_URL: edge.url } });
      // The harness's fakes are its own; this test's Slack is the one behind the edge.
      const world = { ...h, slack } as Harness;
      const { threadTs } = await waitingRequest(world);

      clock += 11 * MINUTE;
      await waitFor(() => reminderPosts(world).length === 2, { message: 'both reminders sent, one of whose replies is lost' }).catch((error: Error) => {
        throw new Error(`${error.message} (sent ${reminderPosts(world).length}); warnings:\n${h.warnings().join('\n')}`);
      });
      const lookedAt = slack.callsTo('conversations.replies').length;
      clock += 5 * MINUTE;
      await h.settled({ sweep: true });
      expect(reminderPosts(world)).toHaveLength(2);
      // The later sweep read the place whose reply was lost, found the reminder there, and was done.
      expect(slack.callsTo('conversations.replies').length).toBeGreaterThan(lookedAt);
      clock += 30 * MINUTE;
      await h.settled({ sweep: true });
      expect(reminderPosts(world)).toHaveLength(2);
      expect(remindersIn(world, CHANNEL, threadTs)).toHaveLength(1);
      expect(slack.messages(APPROVALS).filter((message) => message.text.includes(REMINDER))).toHaveLength(1);
    } finally {
      await edge.close();
      await slack.close();
    }
  });

  it('is not tried again where Slack refuses it for good (channel_not_found)', async () => {
    let clock = Date.UTC(2026, 10, 21, 12, 0);
    const h = await harness({ extraYaml: REMINDED, now: () => clock, sweepIntervalMs: 20 });
    const { threadTs } = await waitingRequest(h);
    h.slack.failWhen('chat.postMessage', (call) => isReminder(call) && call.args.channel === APPROVALS, { error: 'channel_not_found' });

    clock += 11 * MINUTE;
    await waitFor(() => remindersIn(h, CHANNEL, threadTs).length === 1 && reminderPosts(h).length === 2, { message: 'the reminder in the thread and the refused one' });
    for (const minutes of [5, 10, 20]) {
      clock += minutes * MINUTE;
      await h.settled({ sweep: true });
    }
    expect(reminderPosts(h)).toHaveLength(2);
    expect(remindersIn(h, CHANNEL, threadTs)).toHaveLength(1);
  });
});
