import { describe, expect, it } from 'vitest';
import { installFaultHook } from '../../src/runtime/fault-points.js';
import { conversationOf } from '../helpers/fake-openai.js';
import { markerWriteFailsOnce } from '../helpers/marker-write-fails-once.js';
import { CHANNEL, cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();

const SRE_ONLY = `
policy:
  rules:
    - name: sre
      tools: [restart_service]
      approvers: [group:S0SRE]
`;

const restart = (service: string) => ({ name: 'restart_service', arguments: { service, namespace: 'prod' } });
const approveButtons = (h: Harness, threadTs: string) => threadReplies(h, threadTs).flatMap((message) => cardButtons(message.blocks).filter((button) => button.actionId === 'countersign_approve'));
const toolResults = (h: Harness) =>
  conversationOf(h.openai.requests.at(-1)!)
    .filter((message) => message.role === 'tool')
    .map((message) => message.text ?? '')
    .join('\n');

/** Alice's request, decided on its card by Bob, then the turn fails before the approved call starts. */
async function failedAfterApproval(h: Harness, options: { deny?: boolean } = {}) {
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'restart the worker and the api in prod', ts: threadTs });
  const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
  const [approveWorker] = cardButtons(card.blocks).filter((button) => button.actionId === 'countersign_approve');
  await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approveWorker! });
  if (options.deny) {
    const denyApi = await waitFor(
      () => {
        const now = h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts);
        const left = now ? cardButtons(now.blocks).filter((button) => button.actionId === 'countersign_deny') : [];
        return left.length === 1 ? left[0] : undefined;
      },
      { message: 'the first decision on the card' },
    );
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...denyApi });
  }
  const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('could not finish')), { timeoutMs: 10_000, message: 'failure notice' });
  await h.settled();
  const retry = cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry')!;
  return {
    threadTs,
    clickTryAgain: () => h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...retry }),
    shownOnCard: () => JSON.stringify(h.slack.messages(CHANNEL, threadTs).find((message) => message.ts === card.ts)!.blocks),
  };
}

/**
 * The model request fails after the humans decided and before an approved call started (here Redis
 * was out for its marker, so it never ran). Try again runs the turn again: the approval given on
 * the card still holds for that call, so it runs once with what was approved, with no second card,
 * and a call that was denied stays denied.
 */
describe('Try again after a turn that failed before an approved call started', () => {
  it('runs the approved call once, without a second card, and keeps the denied one denied', async () => {
    const h = await harness({ wrapStore: markerWriteFailsOnce });
    h.openai.enqueue({ toolCalls: [restart('worker'), restart('api')] }, { error: { status: 400, message: 'model exploded' } }, { text: 'Restarted the worker.' });
    const { threadTs, clickTryAgain } = await failedAfterApproval(h, { deny: true });
    expect(h.invocations()).toEqual([]);

    await clickTryAgain();
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Restarted the worker.'), { timeoutMs: 10_000, message: 'answer after retry' });
    await h.settled();
    const told = toolResults(h);
    expect({ invocations: h.invocations(), cards: approveButtons(h, threadTs) }, `the model was told: ${told}`).toEqual({
      invocations: [['rollout', 'restart', 'deployment/worker', '-n', 'prod']],
      cards: [],
    });
    expect(told).not.toContain('no approval on record');
    expect(told).toContain('Declined by <@UBOB>');
    const started = (await h.auditEvents()).filter((event) => event.type === 'tool-started');
    expect(started).toEqual([expect.objectContaining({ toolName: 'restart_service', input: { service: 'worker', namespace: 'prod' }, basis: expect.objectContaining({ kind: 'approval', approvedBy: ['UBOB'] }) })]);
  }, 30_000);

  it('does not run it when its approver has left the approving group since, and its card no longer says it was approved', async () => {
    const h = await harness({ wrapStore: markerWriteFailsOnce, extraYaml: SRE_ONLY });
    h.slack.setUsergroupUsers('S0SRE', ['UBOB']);
    h.openai.enqueue({ toolCalls: [restart('worker')] }, { error: { status: 400, message: 'model exploded' } }, { text: 'Bob can no longer approve that.' });
    const { threadTs, clickTryAgain, shownOnCard } = await failedAfterApproval(h);
    h.slack.setUsergroupUsers('S0SRE', []);

    await clickTryAgain();
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Bob can no longer approve that.'), { timeoutMs: 10_000, message: 'answer after retry' });
    await h.settled();
    const told = toolResults(h);
    expect(h.invocations(), `the model was told: ${told}`).toEqual([]);
    expect(told).toContain('the approval by <@UBOB> no longer holds');
    const refusals = (await h.auditEvents()).filter((event) => event.type === 'action-refused');
    expect(refusals).toEqual([expect.objectContaining({ userId: 'UBOB', code: 'approval-revoked', channel: CHANNEL })]);
    // Try again writes the withdrawal on its step and refreshes the card (`createWithdrawalsOnSteps`), as a newer message does.
    expect(shownOnCard(), 'the card still says the refused call was approved').not.toContain('Approved by');
    expect(shownOnCard()).toContain('Not run');
  }, 30_000);

  it('does not run a call whose executing marker was written: it is reported interrupted, never run twice', async () => {
    const h = await harness();
    let faulted = false;
    // The marker is written, then the call's process fails before the tool starts: by the marker, it may have run.
    installFaultHook((name) => {
      if (name !== 'after-marker' || faulted) return;
      faulted = true;
      throw new Error('Connection is closed.');
    });
    try {
      h.openai.enqueue({ toolCalls: [restart('worker')] }, { error: { status: 400, message: 'model exploded' } }, { text: 'It may have restarted.' });
      const { threadTs, clickTryAgain } = await failedAfterApproval(h);
      await clickTryAgain();
      await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'It may have restarted.'), { timeoutMs: 10_000, message: 'answer after retry' });
      await h.settled();
      const told = toolResults(h);
      expect({ faulted, invocations: h.invocations(), cards: approveButtons(h, threadTs) }, `the model was told: ${told}`).toEqual({ faulted: true, invocations: [], cards: [] });
      expect(told).toContain('may or may not have completed');
      expect((await h.auditEvents()).filter((event) => event.type === 'tool-started')).toHaveLength(1);
    } finally {
      installFaultHook(undefined);
    }
  }, 30_000);
});
