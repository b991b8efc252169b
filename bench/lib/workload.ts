import type { FakeOpenAI, RecordedModelRequest, ScriptedReply } from '../../test/helpers/fake-openai.js';
import type { FakeSlackApi } from '../../test/helpers/fake-slack-api.js';
import { appMentionEnvelope, blockActionsPayload } from '../../test/helpers/signed-request.js';

export const SIGNING_SECRET = 'bench-signing-secret';
export const BOT_USER_ID = 'UBENCHBOT';
export const BOT_ID = 'BBENCH001';
export const TEAM_ID = 'T0BENCH01';
export const GATED_TOOL = 'bench_restart';
export const APPROVE_ACTION_ID = 'countersign_approve';
/** What the model answers when it is not asking for the gated tool. */
export const TEXT_ANSWER = 'Hello from the benchmark.';
export const RESUMED_ANSWER = 'Done.';
/** Threads per channel: keeps the fake Slack's per-channel message lists short. */
const THREADS_PER_CHANNEL = 100;

/**
 * `slow-text`: answered with text after the model takes `SLOW_MODEL_MS` (the turn-throughput phase);
 * `slow-card`: a card, with every model call of the thread (the card's, the resumed turn's) taking as long.
 */
export type MentionMode = 'card' | 'text' | 'slow-text' | 'slow-card';

/** How long the model takes to answer in the slow modes: a realistic model. */
export const SLOW_MODEL_MS = 500;

/** In a thread's first message, marks every model call of that thread as slow. */
const SLOW_MARK = 'slowly';

/** One gated command tool whose command does nothing, so an approved call costs one cheap spawn. */
export const BENCH_CONFIG_YAML = `
instructions: You are a benchmark bot. Answer briefly.
tools:
  - name: ${GATED_TOOL}
    description: Restart a service (benchmark no-op)
    command: ["true"]
    parameters:
      service: { type: string, pattern: "[a-z0-9-]+", maxLength: 63 }
    approval: always
    timeoutSeconds: 10
`;

/** Threads of the Chat SDK baseline live in channels `CS…`; the observer counts its posts there. */
export const CHAT_SDK_THREAD_PREFIX = 'S';
const CHAT_SDK_CHANNEL_PREFIX = `C${CHAT_SDK_THREAD_PREFIX}`;

export interface Thread {
  index: number;
  channel: string;
  threadTs: string;
  /** A unique word in the mention, to find where the thread's text is stored. */
  marker: string;
}

export interface RequestSpec {
  contentType: string;
  body: string;
}

/** Hands out fresh threads (a mention starts each one) with Slack-shaped ids. */
export function createThreadFactory(prefix: string): (count: number) => Thread[] {
  let sequence = 0;
  return (count) =>
    Array.from({ length: count }, () => {
      sequence += 1;
      return {
        index: sequence,
        channel: `C${prefix}${String(Math.floor(sequence / THREADS_PER_CHANNEL)).padStart(6, '0')}`,
        threadTs: `${1_600_000_000 + sequence}.000100`,
        marker: `mk${prefix.toLowerCase()}${sequence}x`,
      };
    });
}

const MENTION_TEXT: Record<MentionMode, string> = {
  card: 'please restart the worker',
  text: 'say hello',
  'slow-text': `think ${SLOW_MARK}`,
  'slow-card': `please restart the worker ${SLOW_MARK}`,
};

export function mentionRequest(thread: Thread, mode: MentionMode): RequestSpec {
  const envelope = appMentionEnvelope({
    user: `UREQ${String(thread.index % 1000).padStart(4, '0')}`,
    text: `<@${BOT_USER_ID}> ${MENTION_TEXT[mode]} ${thread.marker}`,
    channel: thread.channel,
    ts: thread.threadTs,
    teamId: TEAM_ID,
    botUserId: BOT_USER_ID,
  });
  return { contentType: 'application/json', body: JSON.stringify(envelope) };
}

/**
 * A later mention in an existing thread (the `sequence`-th message after the first), padded with
 * `paddingCharacters` of filler so a long history weighs what a real one would.
 */
export function threadMentionRequest(options: { thread: Thread; mode: MentionMode; sequence: number; paddingCharacters?: number }): RequestSpec {
  const { thread } = options;
  const ask = options.mode === 'card' ? 'please restart the worker' : 'say hello';
  const padding = 'lorem ipsum dolor sit amet '.repeat(Math.ceil((options.paddingCharacters ?? 0) / 27)).slice(0, options.paddingCharacters ?? 0);
  const envelope = appMentionEnvelope({
    user: `UREQ${String(thread.index % 1000).padStart(4, '0')}`,
    text: `<@${BOT_USER_ID}> ${ask} ${thread.marker} ${padding}`.trim(),
    channel: thread.channel,
    ts: `${thread.threadTs.split('.')[0]}.${String(100 + options.sequence).padStart(6, '0')}`,
    threadTs: thread.threadTs,
    teamId: TEAM_ID,
    botUserId: BOT_USER_ID,
  });
  return { contentType: 'application/json', body: JSON.stringify(envelope) };
}

export function clickRequest(options: { channel: string; threadTs: string; cardTs: string; value: string; user: string; actionId?: string }): RequestSpec {
  const payload = blockActionsPayload({
    user: options.user,
    channel: options.channel,
    messageTs: options.cardTs,
    threadTs: options.threadTs,
    actionId: options.actionId ?? APPROVE_ACTION_ID,
    value: options.value,
    teamId: TEAM_ID,
  });
  return { contentType: 'application/x-www-form-urlencoded', body: `payload=${encodeURIComponent(JSON.stringify(payload))}` };
}

/**
 * The instant model: a mention that asks for a restart gets a call to the gated tool (a card); the
 * turn resumed after the decision gets a short text; anything else gets text.
 */
export function installModelScript(openai: FakeOpenAI): ModelActivity {
  const activity = { inFlight: 0, peakInFlight: 0 };
  openai.setResponder(async (request: RecordedModelRequest): Promise<ScriptedReply> => {
    const messages: Array<{ role?: string; content?: unknown }> = Array.isArray(request.body?.messages) ? request.body.messages : [];
    const textOf = (message: { content?: unknown } | undefined) => (typeof message?.content === 'string' ? message.content : JSON.stringify(message?.content ?? ''));
    if (textOf(messages.find((message) => message.role === 'user')).includes(SLOW_MARK)) {
      activity.inFlight += 1;
      activity.peakInFlight = Math.max(activity.peakInFlight, activity.inFlight);
      await new Promise((resolve) => setTimeout(resolve, SLOW_MODEL_MS));
      activity.inFlight -= 1;
    }
    const last = messages.at(-1);
    if (last?.role === 'tool') return { text: RESUMED_ANSWER };
    if (textOf(last).includes('please restart')) return { toolCalls: [{ name: GATED_TOOL, arguments: { service: 'worker' } }] };
    return { text: TEXT_ANSWER };
  });
  // The fake keeps every request for tests; a benchmark of thousands of turns does not need them.
  const requests = openai.requests;
  const trim = setInterval(() => requests.splice(0, requests.length), 1_000);
  trim.unref();
  return activity;
}

/** Model calls of slow threads in flight now, and the most at once since `peakInFlight` was last reset. */
export interface ModelActivity {
  inFlight: number;
  peakInFlight: number;
}

export interface Card {
  thread: Thread;
  cardTs: string;
  approveValue: string;
}

/**
 * Follows what the bot did in the fake Slack by reading its call log incrementally: cards posted
 * (by thread), answers posted (by thread), and the first update of each card after a given time.
 */
export function createSlackObserver(slack: FakeSlackApi) {
  let scanned = 0;
  const cardThreads = new Set<string>();
  const answered = new Map<string, number>();
  // Every thread gets one card and one Approve: a second resumed answer in a thread means a call ran
  // (or its answer was posted) twice.
  const resumedAnswers = new Map<string, number>();
  const textAnswered = new Map<string, number>();
  const updates = new Map<string, number[]>();
  let ephemerals = 0;
  let chatSdkPosts = 0;
  const threadKey = (channel: string, threadTs: string) => `${channel}|${threadTs}`;
  // Woken by the fake's own call hook: a lane waiting for its answer costs nothing until it lands
  // (polling on a timer took CPU from the processes being measured).
  const answerWaiters = new Map<string, () => void>();

  function poll(): void {
    const calls = slack.calls;
    for (; scanned < calls.length; scanned += 1) {
      const call = calls[scanned];
      if (!call) continue;
      const { args } = call;
      if (call.method === 'chat.postMessage' && String(args.channel).startsWith(CHAT_SDK_CHANNEL_PREFIX)) {
        chatSdkPosts += 1;
      } else if (call.method === 'chat.postMessage' && typeof args.thread_ts === 'string') {
        const key = threadKey(String(args.channel), args.thread_ts);
        if (args.blocks !== undefined) cardThreads.add(key);
        else if (args.text === RESUMED_ANSWER) {
          answered.set(key, call.at);
          resumedAnswers.set(key, (resumedAnswers.get(key) ?? 0) + 1);
          answerWaiters.get(key)?.();
        }
        else if (args.text === TEXT_ANSWER) textAnswered.set(key, (textAnswered.get(key) ?? 0) + 1);
      } else if (call.method === 'chat.postEphemeral') {
        ephemerals += 1;
      } else if (call.method === 'chat.update') {
        const key = threadKey(String(args.channel), String(args.ts));
        const list = updates.get(key) ?? [];
        list.push(call.at);
        updates.set(key, list);
      }
    }
    // The fake keeps every call; only what was read here is needed.
    if (scanned > 50_000) {
      calls.splice(0, scanned);
      scanned = 0;
    }
  }

  slack.onCall(poll);

  return {
    poll,
    /** Resolves once the resumed answer is posted in the thread (rejects after `timeoutMs`). */
    waitForAnswer(thread: Thread, timeoutMs: number): Promise<void> {
      const key = threadKey(thread.channel, thread.threadTs);
      poll();
      if (answered.has(key)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          answerWaiters.delete(key);
          reject(new Error(`timed out after ${timeoutMs} ms waiting for the resumed answer in ${key}`));
        }, timeoutMs);
        answerWaiters.set(key, () => {
          clearTimeout(timer);
          answerWaiters.delete(key);
          resolve();
        });
      });
    },
    /** Threads given a resumed answer so far, and those given more than one (a call run or answered twice). */
    resumedAnswerTally: () => ({ threads: resumedAnswers.size, answeredMoreThanOnce: [...resumedAnswers.values()].filter((count) => count > 1).length }),
    /** Messages the Chat SDK baseline posted so far (its cards and its decisions). */
    chatSdkPostCount: () => chatSdkPosts,
    /** chat.postEphemeral calls seen so far. */
    ephemeralCount: () => ephemerals,
    hasCard: (thread: Thread) => cardThreads.has(threadKey(thread.channel, thread.threadTs)),
    hasAnswer: (thread: Thread) => answered.has(threadKey(thread.channel, thread.threadTs)),
    /** Epoch ms of the resumed answer in the thread, once posted. */
    answeredAt: (thread: Thread) => answered.get(threadKey(thread.channel, thread.threadTs)),
    hasTextAnswer: (thread: Thread) => textAnswered.has(threadKey(thread.channel, thread.threadTs)),
    /** Text answers posted in the thread so far (one per answered text mention). */
    textAnswerCount: (thread: Thread) => textAnswered.get(threadKey(thread.channel, thread.threadTs)) ?? 0,
    /** Epoch ms of the card's first chat.update at or after `since` (the decision shown). */
    firstUpdateAfter(card: Card, since: number): number | undefined {
      return updates.get(threadKey(card.thread.channel, card.cardTs))?.find((at) => at >= since);
    },
    /** Card ts and Approve button value for threads whose card is posted. */
    cards(threads: readonly Thread[]): Card[] {
      const byChannel = new Map<string, Thread[]>();
      for (const thread of threads) byChannel.set(thread.channel, [...(byChannel.get(thread.channel) ?? []), thread]);
      const cards: Card[] = [];
      for (const [channel, channelThreads] of byChannel) {
        const posted = new Map<string, { ts: string; value: string }>();
        for (const message of slack.messages(channel)) {
          const approve = (message.blocks ?? [])
            .filter((block: any) => block.type === 'actions')
            .flatMap((block: any) => block.elements ?? [])
            .find((element: any) => element.type === 'button' && element.action_id === APPROVE_ACTION_ID);
          if (approve && message.thread_ts !== undefined) posted.set(message.thread_ts, { ts: message.ts, value: String(approve.value) });
        }
        for (const thread of channelThreads) {
          const card = posted.get(thread.threadTs);
          if (card) cards.push({ thread, cardTs: card.ts, approveValue: card.value });
        }
      }
      return cards;
    },
  };
}

export type SlackObserver = ReturnType<typeof createSlackObserver>;

export async function waitUntil(check: () => boolean, options: { timeoutMs: number; message: string; intervalMs?: number }): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${options.message}`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 25));
  }
}
