import { describe, expect, it } from 'vitest';
import { blockActionsPayload, postSlackInteraction } from '../helpers/signed-request.js';
import { FAST_KEPT_RETRIES } from '../helpers/fast-kept-retries.js';
import type { PendingCardRefresh, StateStore } from '../../src/store/state-store.js';
import { CHANNEL, SIGNING_SECRET, TEAM_ID, cardButtons, nextTs, useHarnesses, waitFor } from './harness.js';

const harness = useHarnesses();
const APPROVALS = 'C0APPROVALS';
const ROUTED = `
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      approvers: [U0OPS1]
      notify: { channels: [${APPROVALS}] }
`;
const text = (message: { blocks?: unknown[] } | undefined) => JSON.stringify(message?.blocks ?? []);

/**
 * 8dafddb: a turn's first card answered ok:false internal_error while the thread cannot be read is kept
 * "unconfirmed" (the step stays open, the sweep looks for the card), and the copies are posted all the
 * same. A decision on the #approvals copy then updates no card: `showDecisions` draws only while the step
 * records a thread card (`while (rendered.cardTs !== undefined)`), and the turn's refresh also skips a step
 * without one. When the thread can be read again and the card is found absent, the step is no longer
 * pending, so the sweep posts nothing and ends 'gone' without drawing the copies: the #approvals copy keeps
 * "waiting" with live Approve/Deny buttons after the call ran, for good.
 */
describe("a request whose first card Slack answered internal_error (not posted) while the thread could not be read", () => {
  it('shows the decision on the #approvals copy it was decided on', async () => {
    const forgotten: PendingCardRefresh[] = [];
    const h = await harness({
      extraYaml: ROUTED,
      sweepIntervalMs: 100,
      keptRetries: FAST_KEPT_RETRIES,
      slackRetryConfig: { retries: 0 },
      wrapStore: (store: StateStore) => ({
        ...store,
        forgetCardRefresh: async (refresh: PendingCardRefresh) => {
          const result = await store.forgetCardRefresh(refresh);
          forgotten.push(refresh);
          return result;
        },
      }),
    });
    let failed = false;
    h.slack.failWhen(
      'chat.postMessage',
      (call) => {
        if (failed || call.args.channel !== CHANNEL || !JSON.stringify(call.args.blocks ?? '').includes('countersign_approve')) return false;
        failed = true;
        return true;
      },
      { error: 'internal_error' },
    );
    h.slack.failWhen('conversations.replies', () => true, { status: 503 });
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'api', namespace: 'prod' } }] }, { text: 'Restarted api.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart api', ts: threadTs });
    const copyIn = () => h.slack.messages(APPROVALS).find((message) => text(message).includes('Requested in'));
    const copy = await waitFor(() => copyIn(), { message: 'the #approvals copy' });
    await h.settled();
    expect(failed, 'the first card post was answered internal_error').toBe(true);
    const approve = cardButtons(copy.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await postSlackInteraction({
      url: h.eventsUrl,
      signingSecret: SIGNING_SECRET,
      payload: blockActionsPayload({ user: 'U0OPS1', channel: APPROVALS, messageTs: copy.ts, actionId: approve.actionId, value: approve.value, teamId: TEAM_ID }),
    });
    await waitFor(() => h.slack.messages(CHANNEL, threadTs).some((message) => message.text === 'Restarted api.'), { message: 'the answer' });
    await h.settled();
    expect(h.invocations()).toHaveLength(1);

    // Slack is back: the sweep looks for the first card, finds it absent, and the request is already decided.
    h.slack.failWhen('conversations.replies', undefined);
    // Barrier: the sweep is done with the look for the first card (its kept refresh forgotten).
    await waitFor(() => forgotten.some((refresh) => refresh.unconfirmed !== undefined), { timeoutMs: 15_000, message: 'the look for the first card ended' });
    await h.settled();
    const shown = copyIn()!;
    expect({ text: text(shown).includes('Approved by <@U0OPS1>'), buttons: cardButtons(shown.blocks).map((button) => button.actionId) }).toEqual({ text: true, buttons: [] });
  });
});
