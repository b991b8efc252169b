import { describe, expect, it } from 'vitest';
import type { CardCopy } from '../../src/approvals/pending-step.js';
import { directMessageChannel } from '../../src/sandbox/emulator/web-api/workspace-methods.js';
import type { StateStore } from '../../src/store/state-store.js';
import { FAST_KEPT_RETRIES } from '../helpers/fast-kept-retries.js';
import { blockActionsPayload, postSlackInteraction } from '../helpers/signed-request.js';
import { CHANNEL, SIGNING_SECRET, TEAM_ID, cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

/**
 * postMissingCopies posts a copy of the card (to #approvals, to an approver's DM) and records it
 * after. A record that failed (Redis out for that write) left the copy in Slack with live buttons
 * the step does not know: never updated as the request is decided, and every click on it refused as
 * "This request belongs to another channel". The copy is taken back with the kept take-backs, and
 * a click on a copy left unrecorded anyway (Slack would not remove it, the process died between the
 * post and the record) says what it is.
 */
const harness = useHarnesses();

const APPROVALS = 'C0APPROVALS';
const DM_OPS2 = directMessageChannel('U0OPS2');

const ROUTED = `
policy:
  rules:
    - name: prod restarts
      tools: [restart_service]
      approvers: [U0OPS1, U0OPS2]
      notify: { channels: [${APPROVALS}], dmApprovers: true }
`;

const restart = { name: 'restart_service', arguments: { service: 'worker', namespace: 'prod' } };
const text = (message: { blocks?: unknown[] } | undefined) => JSON.stringify(message?.blocks ?? []);
const copyIn = (h: Harness, channel: string) => h.slack.messages(channel).find((message) => text(message).includes('Requested in'));
const approveButton = (message: { blocks?: any[] }) => cardButtons(message.blocks).find((button) => button.actionId === 'countersign_approve')!;
const ephemerals = (h: Harness) => h.slack.callsTo('chat.postEphemeral').map((call) => ({ user: String(call.args.user), channel: String(call.args.channel), text: String(call.args.text) }));

/**
 * The store with the records of the copies in `channels` failing once each: `landed` writes the
 * record before the error (its reply lost), otherwise nothing is written (Redis out).
 */
function copyRecordFailsOnce(channels: readonly string[], { landed = false }: { landed?: boolean } = {}) {
  const failed = new Set<string>();
  return (store: StateStore): StateStore => ({
    ...store,
    async recordCardCopy(stepId: string, copy: CardCopy) {
      if (!channels.includes(copy.channel) || failed.has(copy.channel)) return store.recordCardCopy(stepId, copy);
      failed.add(copy.channel);
      if (landed) await store.recordCardCopy(stepId, copy);
      throw new Error('Connection is closed.');
    },
  });
}

async function pausedOnRoutedCard(h: Harness) {
  h.openai.enqueue({ toolCalls: [restart] }, { text: 'Restarted.' });
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
  const threadCard = await waitFor(() => threadReplies(h, threadTs).find((message) => /waiting for approval in/i.test(text(message))), { message: 'thread card naming its copies' });
  return { threadTs, threadCard, currentThreadCard: () => h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === threadCard.ts)! };
}

function clickIn(h: Harness, options: { channel: string; user: string; messageTs: string; actionId: string; value: string }) {
  return postSlackInteraction({
    url: h.eventsUrl,
    signingSecret: SIGNING_SECRET,
    payload: blockActionsPayload({ user: options.user, channel: options.channel, messageTs: options.messageTs, actionId: options.actionId, value: options.value, teamId: TEAM_ID }),
  });
}

describe('a copy of the card whose record failed', () => {
  it('is taken back, by the sweep once Slack lets it be removed', async () => {
    const h = await harness({ extraYaml: ROUTED, wrapStore: copyRecordFailsOnce([APPROVALS]), keptRetries: FAST_KEPT_RETRIES, sweepIntervalMs: 100 });
    // Slack will not remove it at first: past this process's own tries, the kept take-back is the sweep's.
    h.slack.failWhen('chat.delete', (call) => call.args.channel === APPROVALS, { error: 'internal_error' });
    const { threadCard } = await pausedOnRoutedCard(h);
    const unrecorded = copyIn(h, APPROVALS)!;
    expect(unrecorded).toBeDefined();
    await waitFor(() => h.slack.callsTo('chat.delete').filter((call) => call.args.ts === unrecorded.ts).length >= 4, { message: "this process's own tries to remove the copy" });
    h.slack.failWhen('chat.delete', undefined);
    await waitFor(() => copyIn(h, APPROVALS) === undefined, { timeoutMs: 15_000, message: 'the unrecorded copy taken back' });
    // The thread's card does not send anyone to #approvals, and the DMs are on record.
    expect(text(threadCard)).not.toContain(`<#${APPROVALS}>`);
    expect(text(threadCard)).toContain('a DM to <@U0OPS1>, <@U0OPS2>');
    await h.settled();
  }, 30_000);

  it('is kept when the record landed and only its reply was lost', async () => {
    const h = await harness({ extraYaml: ROUTED, wrapStore: copyRecordFailsOnce([APPROVALS], { landed: true }), keptRetries: FAST_KEPT_RETRIES });
    const { threadTs, currentThreadCard } = await pausedOnRoutedCard(h);
    const copy = copyIn(h, APPROVALS)!;
    await waitFor(() => text(currentThreadCard()).includes(`<#${APPROVALS}>`), { message: 'the thread card naming the #approvals copy' });
    await clickIn(h, { channel: APPROVALS, user: 'U0OPS1', messageTs: copy.ts, ...approveButton(copy) });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted.'), { message: 'answer' });
    await h.settled();
    expect(h.slack.callsTo('chat.delete').filter((call) => call.args.ts === copy.ts)).toEqual([]);
    expect(text(copyIn(h, APPROVALS))).toContain('Approved by <@U0OPS1>');
    expect(h.invocations()).toHaveLength(1);
  });
});

describe('a click on a copy of the card the step does not record', () => {
  it('is told the copy is out of date and where the request is, and changes nothing', async () => {
    const h = await harness({ extraYaml: ROUTED, wrapStore: copyRecordFailsOnce([APPROVALS, DM_OPS2]) });
    // Slack would not remove them (as a process that died between the post and the record never asked it to).
    h.slack.failWhen('chat.delete', () => true, { error: 'cant_delete_message' });
    const { threadCard, currentThreadCard } = await pausedOnRoutedCard(h);
    await h.settled();
    const stale = [
      { channel: APPROVALS, user: 'U0OPS1', copy: copyIn(h, APPROVALS)! },
      { channel: DM_OPS2, user: 'U0OPS2', copy: copyIn(h, DM_OPS2)! },
    ];
    for (const [index, { channel, user, copy }] of stale.entries()) {
      await clickIn(h, { channel, user, messageTs: copy.ts, ...approveButton(copy) });
      await waitFor(() => ephemerals(h).length === index + 1, { message: `refusal ${index + 1}` });
    }
    for (const told of ephemerals(h)) {
      expect(told.text).not.toContain('belongs to another channel');
      expect(told.text).toContain('This copy of the request is out of date, so nothing changed');
      expect(told.text).toContain(`/archives/${CHANNEL}/p${threadCard.ts.replace('.', '')}`);
    }
    await h.settled();
    expect(h.invocations()).toEqual([]);
    expect((await h.auditEvents()).filter((event) => event.type === 'decision')).toEqual([]);
    expect(cardButtons(currentThreadCard().blocks).length).toBeGreaterThan(0);
  });
});
