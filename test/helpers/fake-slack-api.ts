import { startSlackEmulator, type InterceptedAnswer, type SlackCall } from '../../src/sandbox/emulator/slack-emulator.js';
import type { SlackAnswer } from './fake-slack-answers.js';
import { createConditionWaiters } from './condition-waiters.js';
import { describeSlackCalls } from './describe-slack-calls.js';
import type { StoredSlackMessage } from './fake-slack-state.js';

export type { StoredSlackMessage } from './fake-slack-state.js';

/**
 * The product's Slack emulator (src/sandbox/emulator) plus what only tests need: every call
 * recorded, waiting for a call, injected failures and per-method overrides.
 */
export interface RecordedSlackCall {
  method: string;
  args: Record<string, any>;
  token: string | undefined;
  at: number;
}

export type SlackFailure = { status: number; retryAfterSeconds?: number } | { error: string };

/** Overrides a method's answer (sent as HTTP 200), e.g. to make users.info return an admin. */
export type SlackMethodOverride = (call: RecordedSlackCall) => SlackAnswer | Promise<SlackAnswer>;

export interface FakeSlackApi {
  url: string;
  calls: RecordedSlackCall[];
  callsTo(method: string): RecordedSlackCall[];
  waitForCall(
    method: string,
    predicate?: (call: RecordedSlackCall) => boolean,
    options?: { timeoutMs?: number },
  ): Promise<RecordedSlackCall>;
  messages(channel: string, threadTs?: string): StoredSlackMessage[];
  addMessage(
    channel: string,
    message: { user: string; text: string; ts?: string; thread_ts?: string; bot_id?: string },
  ): StoredSlackMessage;
  failNext(method: string, failure: SlackFailure, times?: number): void;
  /** Fails every call to `method` that `predicate` picks, until replaced or reset. */
  failWhen(method: string, predicate: ((call: RecordedSlackCall) => boolean) | undefined, failure?: SlackFailure): void;
  /** Members answered by usergroups.users.list (otherwise an empty list). */
  setUsergroupUsers(usergroup: string, users: string[]): void;
  /** Members users.conversations answers for a channel (otherwise everyone is in every channel). */
  setChannelMembers(channel: string, users: string[]): void;
  setMethodHandler(method: string, handler: SlackMethodOverride | undefined): void;
  /** The next call to `method` waits, unanswered and unrecorded, until `release()`; `received` resolves when it arrives. */
  holdNext(method: string): { received: Promise<void>; release: () => void };
  /** Calls `listener` after each call is recorded (a benchmark's barrier, instead of polling `calls`); returns the unsubscribe. */
  onCall(listener: (call: RecordedSlackCall) => void): () => void;
  reset(): void;
  close(): Promise<void>;
}

/** Used when a 429 is injected without a delay: WebClient treats a 429 lacking Retry-After as fatal. */
const DEFAULT_RETRY_AFTER_SECONDS = 1;

function injectedFailure(failure: SlackFailure): InterceptedAnswer {
  if ('error' in failure) return { body: { ok: false, error: failure.error } };
  const retryAfter = failure.status === 429 ? (failure.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS) : failure.retryAfterSeconds;
  return {
    status: failure.status,
    body: { ok: false, error: failure.status === 429 ? 'ratelimited' : 'fake_http_error' },
    headers: retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) },
  };
}

export async function startFakeSlackApi(options: { botUserId?: string; botId?: string; teamId?: string } = {}): Promise<FakeSlackApi> {
  const calls: RecordedSlackCall[] = [];
  const failures = new Map<string, SlackFailure[]>();
  const overrides = new Map<string, SlackMethodOverride>();
  const conditionalFailures = new Map<string, { predicate: (call: RecordedSlackCall) => boolean; failure: SlackFailure }>();
  const waiters = createConditionWaiters();

  const holds = new Map<string, { arrived: () => void; released: Promise<void> }>();

  async function intercept(call: SlackCall): Promise<InterceptedAnswer | undefined> {
    const hold = holds.get(call.method);
    if (hold) {
      holds.delete(call.method);
      hold.arrived();
      await hold.released;
    }
    const recorded = call as RecordedSlackCall;
    const conditional = conditionalFailures.get(call.method);
    const failure =
      failures.get(call.method)?.shift() ?? (conditional && predicateHolds({ predicate: conditional.predicate, call: recorded }) ? conditional.failure : undefined);
    if (failure) return injectedFailure(failure);
    const override = overrides.get(call.method);
    return override ? { body: await override(recorded) } : undefined;
  }

  const emulator = await startSlackEmulator({
    identity: {
      ...(options.botUserId === undefined ? {} : { botUserId: options.botUserId }),
      ...(options.botId === undefined ? {} : { botId: options.botId }),
      ...(options.teamId === undefined ? {} : { teamId: options.teamId }),
    },
    intercept,
  });
  const { state } = emulator;
  const listeners = new Set<(call: RecordedSlackCall) => void>();
  emulator.onCall((call) => {
    calls.push(call as RecordedSlackCall);
    waiters.recheck();
    for (const listener of listeners) listener(call as RecordedSlackCall);
  });

  return {
    url: emulator.url,
    calls,
    onCall(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    callsTo: (method) => calls.filter((call) => call.method === method),
    waitForCall(method, predicate, waitOptions) {
      const matches = (call: RecordedSlackCall) => call.method === method && predicateHolds({ predicate, call });
      return waiters.waitFor({
        check: () => calls.find(matches),
        timeoutMs: waitOptions?.timeoutMs ?? 5000,
        describeTimeout: (timeoutMs) =>
          `fake-slack-api: no ${method} call${predicate ? ' matching the predicate' : ''} within ${timeoutMs} ms. ` +
          describeSlackCalls({ calls, focusMethod: method }),
      });
    },
    messages(channel, threadTs) {
      const selected = threadTs === undefined ? state.messages.inChannel(channel) : state.messages.thread({ channel, threadTs });
      return structuredClone(selected) as StoredSlackMessage[];
    },
    addMessage(channel, message) {
      const stored = state.messages.store({
        channel,
        ts: message.ts ?? state.nextTs(),
        ...(message.thread_ts === undefined ? {} : { thread_ts: message.thread_ts }),
        user: message.user,
        ...(message.bot_id === undefined ? {} : { bot_id: message.bot_id }),
        text: message.text,
      });
      return structuredClone(stored) as StoredSlackMessage;
    },
    failNext(method, failure, times = 1) {
      const queued = failures.get(method) ?? [];
      queued.push(...Array.from({ length: times }, () => failure));
      failures.set(method, queued);
    },
    holdNext(method) {
      let arrived!: () => void;
      let release!: () => void;
      const received = new Promise<void>((resolve) => {
        arrived = resolve;
      });
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      holds.set(method, { arrived, released });
      return { received, release };
    },
    failWhen(method, predicate, failure = { status: 500 }) {
      if (predicate) conditionalFailures.set(method, { predicate, failure });
      else conditionalFailures.delete(method);
    },
    setUsergroupUsers(usergroup, users) {
      state.usergroupUsers.set(usergroup, [...users]);
    },
    setChannelMembers(channel, users) {
      state.channelMembers.set(channel, new Set(users));
    },
    setMethodHandler(method, handler) {
      if (handler) overrides.set(method, handler);
      else overrides.delete(method);
    },
    reset() {
      // Emptied in place so references a test already holds to `calls` stay live.
      calls.splice(0, calls.length);
      failures.clear();
      conditionalFailures.clear();
      overrides.clear();
      state.clear();
    },
    async close() {
      waiters.cancelAll('fake-slack-api: closed while waiting');
      await emulator.close();
    },
  };
}

/** A predicate that throws on an unrelated call (e.g. reads `args.blocks[0]`) simply does not match it. */
function predicateHolds(options: { predicate: ((call: RecordedSlackCall) => boolean) | undefined; call: RecordedSlackCall }): boolean {
  try {
    return options.predicate?.(options.call) ?? true;
  } catch {
    return false;
  }
}
