import { describe, expect, it } from 'vitest';
import { messageEnvelope, postSlackEvent } from '../helpers/signed-request.js';
import { CHANNEL, SIGNING_SECRET, TEAM_ID, nextTs, threadReplies, useHarnesses, waitFor, type Harness } from './harness.js';

const harness = useHarnesses();

const texts = (h: Harness, threadTs: string) => threadReplies(h, threadTs).map((message) => message.text);

async function followedThread(h: Harness) {
  h.openai.enqueue({ text: 'First answer.' });
  const threadTs = nextTs();
  await h.mention({ user: 'UALICE', text: 'hello', ts: threadTs });
  await waitFor(() => texts(h, threadTs).includes('First answer.'), { message: 'first answer' });
  await h.settled();
  return threadTs;
}

/** Holds the thread's next turn on the model until released; later turns answer with `answer`. */
function holdNextTurn(h: Harness, answer: (call: number) => string) {
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let calls = 0;
  h.openai.setResponder(async () => {
    calls += 1;
    if (calls === 1) {
      await held;
      return { text: 'Slow answer.' };
    }
    return { text: answer(calls) };
  });
  return release;
}

/** Alice deletes her reply `ts` in the thread: Slack's `message_deleted`, with the message as it was. */
async function deleteReply(h: Harness, { threadTs, ts, text }: { threadTs: string; ts: string; text: string }) {
  const deleted = messageEnvelope({ text: '', subtype: 'message_deleted', channel: CHANNEL, channelType: 'channel', threadTs, teamId: TEAM_ID }) as { event: Record<string, unknown> };
  deleted.event.deleted_ts = ts;
  deleted.event.hidden = true;
  deleted.event.previous_message = { user: 'UALICE', text, ts, thread_ts: threadTs };
  await postSlackEvent({ url: h.eventsUrl, signingSecret: SIGNING_SECRET, envelope: deleted });
  // Every request but the held turn's is handled, the deletion's included, before the turn ends.
  await h.settled({ holding: 1 });
}

describe('a request deleted (message_deleted) while it waits behind a running turn', () => {
  it('is not run: the bot does not answer, or act on, a message its author took back', async () => {
    const h = await harness();
    const threadTs = await followedThread(h);
    const release = holdNextTurn(h, () => 'Answered the deleted request.');
    await h.threadMessage({ user: 'UALICE', text: 'first question', threadTs });
    await h.openai.waitForRequests(2);
    const deletedTs = nextTs();
    await h.threadMessage({ user: 'UALICE', text: 'restart prod please', threadTs, ts: deletedTs });
    await deleteReply(h, { threadTs, ts: deletedTs, text: 'restart prod please' });
    release();
    await h.settled();
    expect(texts(h, threadTs)).toEqual(['First answer.', 'Slow answer.']);
  });

  it('leaves the message queued after it to be answered, without the deleted one in its history', async () => {
    const h = await harness();
    const threadTs = await followedThread(h);
    const release = holdNextTurn(h, () => 'Answered the next question.');
    await h.threadMessage({ user: 'UALICE', text: 'first question', threadTs });
    await h.openai.waitForRequests(2);
    const deletedTs = nextTs();
    await h.threadMessage({ user: 'UALICE', text: 'restart prod please', threadTs, ts: deletedTs });
    await h.threadMessage({ user: 'UALICE', text: 'how is staging?', threadTs });
    await deleteReply(h, { threadTs, ts: deletedTs, text: 'restart prod please' });
    release();
    await h.settled();
    expect(texts(h, threadTs)).toEqual(['First answer.', 'Slow answer.', 'Answered the next question.']);
    const lastRequest = JSON.stringify(h.openai.requests.at(-1)?.body);
    expect(lastRequest).toContain('how is staging?');
    expect(lastRequest).not.toContain('restart prod please');
  });
});
