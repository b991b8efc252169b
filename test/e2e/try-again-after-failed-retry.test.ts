import { describe, expect, it } from 'vitest';
import type { StateStore } from '../../src/store/state-store.js';
import { conversationOf } from '../helpers/fake-openai.js';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

/**
 * A Try again item that fails once the retry is taken in (here Redis, on the read right after that
 * save) leaves the failure marked as retrying. A later click continues that retry; its carried
 * approvals must be judged again then, as at any Try again, not run on the first click's judgement.
 */
const harness = useHarnesses();

const SRE_ONLY = `
policy:
  rules:
    - name: sre
      tools: [restart_service]
      approvers: [group:S0SRE]
`;

/**
 * Redis out for the first executing marker (the approved call never starts, then the model request
 * fails), and, once armed, out for one read of the executing markers: the read Try again makes right
 * after the save that takes it in.
 */
function flakyStore(store: StateStore) {
  let markerFailed = false;
  let failMarkersRead = false;
  const wrapped: StateStore = {
    ...store,
    markExecuting: async (options) => {
      if (!markerFailed) {
        markerFailed = true;
        throw new Error('Connection is closed.');
      }
      return store.markExecuting(options);
    },
    executingCalls: async (threadKey) => {
      if (failMarkersRead) {
        failMarkersRead = false;
        throw new Error('Connection is closed.');
      }
      return store.executingCalls(threadKey);
    },
  };
  return { wrapped, armMarkersReadFailure: () => (failMarkersRead = true) };
}

const restart = (service: string) => ({ name: 'restart_service', arguments: { service, namespace: 'prod' } });
const toolResults = (h: Harness) =>
  conversationOf(h.openai.requests.at(-1)!)
    .filter((message) => message.role === 'tool')
    .map((message) => message.text ?? '')
    .join('\n');

describe('Try again clicked again after a retry that failed on Redis', () => {
  it('checks the approval again, as at the first click: an approver who has left the group since runs nothing', async () => {
    let flaky: ReturnType<typeof flakyStore> | undefined;
    const h = await harness({
      wrapStore: (store) => {
        flaky = flakyStore(store);
        return flaky.wrapped;
      },
      extraYaml: SRE_ONLY,
    });
    h.slack.setUsergroupUsers('S0SRE', ['UBOB']);
    h.openai.enqueue({ toolCalls: [restart('worker')] }, { error: { status: 400, message: 'model exploded' } }, { text: 'Done.' });

    // Alice asks, Bob approves, the marker write fails, the model request fails: Try again is offered.
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    const [approve] = cardButtons(card.blocks).filter((button) => button.actionId === 'countersign_approve');
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve! });
    const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('could not finish')), { timeoutMs: 10_000, message: 'failure notice' });
    await h.settled();
    const retry = cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry')!;
    expect(h.invocations()).toEqual([]);

    // First Try again: Bob's approval holds and is judged so; the retry is saved as taken in, then
    // Redis blips on the very next read and the item stops with "Something went wrong … try again".
    flaky!.armMarkersReadFailure();
    await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...retry });
    await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('Something went wrong')), { timeoutMs: 10_000, message: 'something-went-wrong notice' });
    await h.settled();
    expect(h.invocations()).toEqual([]);

    // Later, Bob leaves @sre. Alice clicks Try again again, as the notice told her to.
    h.slack.setUsergroupUsers('S0SRE', []);
    await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...retry });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Done.'), { timeoutMs: 10_000, message: 'answer after the second Try again' });
    await h.settled();

    const told = toolResults(h);
    // Bob no longer may approve restarts, so as at any Try again his approval must not run the call.
    expect(h.invocations(), `the model was told: ${told}`).toEqual([]);
    expect(told).toContain('no longer holds');
    // The trail says why, once.
    const refused = (await h.auditEvents()).filter((event) => event.type === 'action-refused');
    expect(refused).toEqual([expect.objectContaining({ userId: 'UBOB', action: 'retry', code: 'approval-revoked' })]);
  }, 40_000);
});
