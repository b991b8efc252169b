import { describe, expect, it } from 'vitest';
import { conversationOf, type RecordedModelRequest, type ScriptedReply } from '../helpers/fake-openai.js';
import type { StateStore } from '../../src/store/state-store.js';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();

/**
 * What the real Chat Completions API checks of a history: every assistant message with tool_calls is
 * followed at once by one tool message per call id, and a tool message answers a call of the
 * assistant message right before its run of tool messages. Anything else is a 400.
 */
function chatHistoryProblems(request: RecordedModelRequest): string[] {
  const messages: any[] = request.body?.messages ?? [];
  const problems: string[] = [];
  for (let index = 0; index < messages.length; index += 1) {
    const message = messages[index];
    if (message.role === 'tool') {
      let owner = index - 1;
      while (owner >= 0 && messages[owner].role === 'tool') owner -= 1;
      const ids = (messages[owner]?.tool_calls ?? []).map((call: any) => call.id);
      if (messages[owner]?.role !== 'assistant' || !ids.includes(message.tool_call_id)) problems.push(`tool message for ${message.tool_call_id} does not follow its call`);
    }
    if (message.role === 'assistant' && Array.isArray(message.tool_calls)) {
      const answered: string[] = [];
      for (let next = index + 1; next < messages.length && messages[next].role === 'tool'; next += 1) answered.push(messages[next].tool_call_id);
      for (const call of message.tool_calls) if (!answered.includes(call.id)) problems.push(`call ${call.id} has no tool message right after it`);
    }
  }
  return problems;
}

const restart = (service: string) => ({ name: 'restart_service', arguments: { service, namespace: 'prod' } });
const pods = { name: 'get_pods', arguments: { namespace: 'prod' } };

/** Alice asks for a restart, Bob denies it, the model lists the pods (no card) and then the model request fails. */
async function deniedThenToolThenFailure(h: Harness, afterwards: ScriptedReply[]) {
  h.openai.enqueue({ toolCalls: [restart('worker')] }, { toolCalls: [pods] }, { error: { status: 400, message: 'model exploded' } }, ...afterwards);
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
  const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
  const deny = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_deny')!;
  await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...deny });
  const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('could not finish')), { timeoutMs: 10_000, message: 'failure notice' });
  await h.settled();
  expect(h.invocations()).toEqual([['get', 'pods', '-n', 'prod']]);
  return { threadTs, notice };
}

describe('a resumed turn with a denied call, a tool step, then a failed model request', () => {
  it('Try again asks the model again', async () => {
    const h = await harness({ api: 'chat' });
    const { threadTs, notice } = await deniedThenToolThenFailure(h, [{ text: 'Bob declined the restart; the pods are listed above.' }]);
    const requestsBefore = h.openai.requests.length;
    const retry = cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry')!;
    await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...retry });
    await h.settled();
    const notices = threadReplies(h, threadTs).filter((message) => message.text.includes('could not finish')).map((message) => message.text);
    expect({ modelAskedAgain: h.openai.requests.length > requestsBefore, notices }).toEqual({ modelAskedAgain: true, notices: [notice.text] });
  }, 30_000);

  it('the same with an approved call whose marker write failed (Redis blip): Try again asks the model again', async () => {
    let failed = false;
    const h = await harness({
      api: 'chat',
      wrapStore: (store: StateStore): StateStore => ({
        ...store,
        markExecuting: async (options) => {
          if (!failed) {
            failed = true;
            throw new Error('Connection is closed.');
          }
          return store.markExecuting(options);
        },
      }),
    });
    h.openai.enqueue({ toolCalls: [restart('worker')] }, { toolCalls: [pods] }, { error: { status: 400, message: 'model exploded' } }, { text: 'Done.' });
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'restart the worker in prod', ts: threadTs });
    const card = await waitFor(() => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0), { message: 'card' });
    const approve = cardButtons(card.blocks).find((button) => button.actionId === 'countersign_approve')!;
    await h.click({ user: 'UBOB', cardTs: card.ts, threadTs, ...approve });
    const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('could not finish')), { timeoutMs: 10_000, message: 'failure notice' });
    await h.settled();
    const requestsBefore = h.openai.requests.length;
    const retry = cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry')!;
    await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...retry });
    await h.settled();
    const notices = threadReplies(h, threadTs).filter((message) => message.text.includes('could not finish')).map((message) => message.text);
    expect({ modelAskedAgain: h.openai.requests.length > requestsBefore, notices }).toEqual({ modelAskedAgain: true, notices: [notice.text] });
  }, 30_000);

  it.each(['chat', 'responses'] as const)('the next message sends a history the model API accepts (%s)', async (api) => {
    const h = await harness({ api });
    const { threadTs } = await deniedThenToolThenFailure(h, [{ text: 'Nothing else to do.' }]);
    const requestsBefore = h.openai.requests.length;
    await h.threadMessage({ user: 'UALICE', text: 'anything else?', threadTs });
    await waitFor(() => h.openai.requests.length > requestsBefore, { timeoutMs: 10_000, message: 'the request for the next message' });
    await h.settled();
    const last = h.openai.requests.at(-1)!;
    const told = JSON.stringify(conversationOf(last), null, 1);
    if (api === 'chat') expect.soft(chatHistoryProblems(last), told).toEqual([]);
    // Whatever the API: the denied call is told as Bob's denial, not as an interruption.
    expect.soft(conversationOf(last).find((entry) => entry.toolCallId === 'call_1')?.text).toContain('Declined by <@UBOB>');
  }, 30_000);
});
