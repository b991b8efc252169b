import { describe, expect, it } from 'vitest';
import { conversationOf } from '../helpers/fake-openai.js';
import { cardButtons, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();

/**
 * A read-only call runs, then the turn ends with a card: that save does not drop the call's
 * executing marker (the card's calls have no result yet). Alice changes her mind twice, each
 * message superseding the card; the get_pods of her first request ran once and was answered there,
 * so no later turn may hear of it again as a call it made and that was interrupted.
 */
describe('a call that ran in an earlier exchange', () => {
  const openCard = (h: Harness, threadTs: string) => threadReplies(h, threadTs).find((message) => cardButtons(message.blocks).length > 0);

  async function checkPodsThenChangeMind(h: Harness): Promise<{ threadTs: string; firstCardTs: string }> {
    h.openai.enqueue(
      { toolCalls: [{ name: 'get_pods', arguments: { namespace: 'staging' } }] },
      { toolCalls: [{ name: 'restart_service', arguments: { service: 'api', namespace: 'staging' } }] },
    );
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'check pods then restart api', ts: threadTs });
    const firstCard = await waitFor(() => openCard(h, threadTs), { message: 'the first card' });
    await h.settled();
    return { threadTs, firstCardTs: firstCard.ts };
  }

  /** What the model was last told of get_pods: its calls, and any "interrupted" result. */
  function getPodsAsLastTold(h: Harness) {
    const conversation = conversationOf(h.openai.requests.at(-1)!);
    return {
      calls: conversation.flatMap((entry) => (entry.toolCalls ?? []).filter((call) => call.name === 'get_pods')),
      interrupted: conversation.filter((entry) => entry.role === 'tool' && (entry.text ?? '').includes('Interrupted')),
      conversation: JSON.stringify(conversation, null, 1),
    };
  }

  it('is not written into a later exchange as interrupted when a second card is superseded', async () => {
    const h = await harness({ api: 'chat' });
    const { threadTs, firstCardTs } = await checkPodsThenChangeMind(h);
    h.openai.enqueue({ toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] }, { text: 'Hello.' });
    await h.mention({ user: 'UALICE', text: 'actually restart worker instead', ts: nextTs(), threadTs });
    await waitFor(() => (openCard(h, threadTs)?.ts ?? firstCardTs) !== firstCardTs || undefined, { message: 'the second card' });
    await h.settled();
    await h.mention({ user: 'UALICE', text: 'never mind, hello', ts: nextTs(), threadTs });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Hello.') || undefined, { timeoutMs: 10_000, message: 'the answer' });
    await h.settled();
    expect(h.invocations()).toEqual([['get', 'pods', '-n', 'staging']]);
    const told = getPodsAsLastTold(h);
    expect(told.interrupted, told.conversation).toEqual([]);
    expect(told.calls, told.conversation).toHaveLength(1);
  }, 30_000);

  it('is not written back in as interrupted once the history has dropped its exchange', async () => {
    // Seven messages hold the second exchange but not the first beside Alice's second message: the
    // first request's get_pods calls (and their results) leave the history, and only their
    // markers could still tell of them.
    const h = await harness({ api: 'chat', extraYaml: 'history:\n  maxMessages: 7\n' });
    h.openai.enqueue(
      { toolCalls: [{ name: 'get_pods', arguments: { namespace: 'staging' } }] },
      { toolCalls: [{ name: 'get_pods', arguments: { namespace: 'prod' } }] },
      { toolCalls: [{ name: 'restart_service', arguments: { service: 'api', namespace: 'staging' } }] },
      { toolCalls: [{ name: 'restart_service', arguments: { service: 'worker', namespace: 'staging' } }] },
      { text: 'Hello.' },
    );
    const threadTs = nextTs();
    await h.mention({ user: 'UALICE', text: 'check pods everywhere then restart api', ts: threadTs });
    const firstCard = await waitFor(() => openCard(h, threadTs), { message: 'the first card' });
    await h.settled();
    await h.mention({ user: 'UALICE', text: 'actually restart worker instead', ts: nextTs(), threadTs });
    await waitFor(() => (openCard(h, threadTs)?.ts ?? firstCard.ts) !== firstCard.ts || undefined, { message: 'the second card' });
    await h.settled();
    await h.mention({ user: 'UALICE', text: 'never mind, hello', ts: nextTs(), threadTs });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text === 'Hello.') || undefined, { timeoutMs: 10_000, message: 'the answer' });
    await h.settled();
    expect(h.invocations()).toEqual([['get', 'pods', '-n', 'staging'], ['get', 'pods', '-n', 'prod']]);
    const told = getPodsAsLastTold(h);
    expect(told.interrupted, told.conversation).toEqual([]);
    expect(told.calls, told.conversation).toEqual([]);
  }, 30_000);

  it('is not written into a later exchange as interrupted when a turn there fails and is tried again', async () => {
    const h = await harness({ api: 'chat' });
    const { threadTs } = await checkPodsThenChangeMind(h);
    h.openai.enqueue({ error: { status: 400, message: 'bad request' } }, { text: 'Restarting worker needs a new request; nothing ran.' });
    await h.mention({ user: 'UALICE', text: 'actually restart worker instead', ts: nextTs(), threadTs });
    const notice = await waitFor(() => threadReplies(h, threadTs).find((message) => message.text.includes('could not finish')), { timeoutMs: 10_000, message: 'failure notice' });
    await h.settled();
    const retry = cardButtons(notice.blocks).find((button) => button.actionId === 'countersign_retry')!;
    await h.click({ user: 'UALICE', cardTs: notice.ts, threadTs, ...retry });
    await waitFor(() => threadReplies(h, threadTs).some((message) => message.text.startsWith('Restarting worker')) || undefined, { timeoutMs: 10_000, message: 'the answer after Try again' });
    await h.settled();
    expect(h.invocations()).toEqual([['get', 'pods', '-n', 'staging']]);
    const told = getPodsAsLastTold(h);
    expect(told.interrupted, told.conversation).toEqual([]);
    expect(told.calls, told.conversation).toHaveLength(1);
  }, 30_000);
});
