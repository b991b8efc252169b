import { describe, expect, it } from 'vitest';
import { fillForm } from './fill-form.js';
import { FAST_KEPT_RETRIES } from '../helpers/fast-kept-retries.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();

const POLICY = `
policy:
  rules:
    - name: restarts need two
      tools: [restart_service]
      approvers: [U0OPS1, U0OPS2]
      required: 2
      expiry: 1h
`;

type Failure = { error: string } | { status: number; retryAfterSeconds?: number };
const cases: Array<{ name: string; failure: Failure; times: number }> = [
  { name: 'Slack refuses the edited card (invalid_blocks)', failure: { error: 'invalid_blocks' }, times: 1 },
  { name: 'chat.update rate limited past the client\'s retries', failure: { status: 429, retryAfterSeconds: 1 }, times: 3 },
];

describe('an edit whose card update fails', () => {
  for (const { name, failure, times } of cases) {
    it(`(${name}) leaves the second approver a way to approve the new version, or says so in the thread`, async () => {
      const h = await harness({ extraYaml: POLICY, keptRetries: FAST_KEPT_RETRIES });
      h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: 'Restarted worker-2 in staging.' });
      const threadTs = nextTs();
      await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
      const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
      const button = (blocks: any[] | undefined, actionId: string) => cardButtons(blocks).find((candidate) => candidate.actionId === actionId)!;

      // Ops1 edits the input (counts as 1 of 2); the card's update for it fails.
      await h.click({ user: 'U0OPS1', cardTs: card.ts, threadTs, ...button(card.blocks, 'countersign_edit') });
      const view = (await h.slack.waitForCall('views.open')).args.view;
      h.slack.failNext('chat.update', failure, times);
      const response = await h.submitView({ user: 'U0OPS1', view, values: fillForm(view, { Service: 'worker-2', Namespace: 'staging' }) });
      expect(response.status).toBe(200);
      await h.settled();

      // Ops2 clicks Approve on the card as it stands.
      const shown = () => h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!;
      await h.click({ user: 'U0OPS2', cardTs: card.ts, threadTs, ...button(shown().blocks, 'countersign_approve') });
      await h.settled();
      const refusals = h.slack.callsTo('chat.postEphemeral').filter((call) => call.args.user === 'U0OPS2').map((call) => String(call.args.text));

      if (h.invocations().length === 1) return; // approved: fine
      // Refused as stale ("Check the card again"): the card must then show the version to approve.
      expect(refusals.join('\n')).toContain('Check the card again');
      const approveNow = button(shown().blocks, 'countersign_approve');
      expect(approveNow?.value, 'Ops2 is told to check the card, but the card still offers only version 1').toMatch(/:v1$/);
    }, 40_000);
  }
});

describe('an edit whose card Slack refuses to update for good', () => {
  it('posts the card again with the new version to approve, says so, and the second approver approves it there', async () => {
    const h = await harness({ extraYaml: POLICY, keptRetries: FAST_KEPT_RETRIES });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } }] }, { text: 'Restarted worker-2 in staging.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    const button = (blocks: any[] | undefined, actionId: string) => cardButtons(blocks).find((candidate) => candidate.actionId === actionId)!;

    await h.click({ user: 'U0OPS1', cardTs: card.ts, threadTs, ...button(card.blocks, 'countersign_edit') });
    const view = (await h.slack.waitForCall('views.open')).args.view;
    // Slack will not update this card again, however often it is asked (a message it cannot edit any more).
    h.slack.failWhen('chat.update', (call) => call.args.ts === card.ts, { error: 'cant_update_message' });
    await h.submitView({ user: 'U0OPS1', view, values: fillForm(view, { Service: 'worker-2', Namespace: 'staging' }) });
    await h.settled();

    const again = threadReplies(h, threadTs).find((message) => message.ts !== card.ts && cardButtons(message.blocks).length > 0);
    expect(button(again?.blocks, 'countersign_approve')?.value, 'a card offering the edited version').toMatch(/:v1$/);
    const notice = threadReplies(h, threadTs).find((message) => message.text.includes('Slack would not update the earlier approval card'));
    // The notice points at the card below, which shows the request as it stands (the notice itself names no state, 209ab98).
    expect(notice?.text).toContain('so it is posted again just above');
    expect(JSON.stringify(again?.blocks)).toContain('*Version 2*');

    await h.click({ user: 'U0OPS2', cardTs: again!.ts, threadTs, ...button(again!.blocks, 'countersign_approve') });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted worker-2 in staging.'), { message: 'the answer' });
    await h.settled();
    expect(h.invocations()).toEqual([expect.arrayContaining(['deployment/worker-2', 'staging'])]);
    // The card posted again is the step's: it shows the decision.
    const shownAgain = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === again!.ts)!;
    expect(cardButtons(shownAgain.blocks).map((candidate) => candidate.actionId)).not.toContain('countersign_approve');
  }, 40_000);
});
