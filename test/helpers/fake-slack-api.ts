import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SlackAnswer, SlackMethodHandler } from './fake-slack-answers.js';
import { threadMessages, MESSAGE_METHODS } from './fake-slack-message-methods.js';
import { createFakeSlackState, type StoredSlackMessage } from './fake-slack-state.js';
import { STREAM_METHODS } from './fake-slack-stream-methods.js';
import { VIEW_METHODS } from './fake-slack-view-methods.js';
import { WORKSPACE_METHODS } from './fake-slack-workspace-methods.js';
import { createConditionWaiters } from './condition-waiters.js';
import { listenOnLoopback, readRequestBody, sendJson } from './loopback-http.js';
import { describeSlackCalls } from './describe-slack-calls.js';
import { API_APP_ID, DEFAULT_BOT_ID, DEFAULT_BOT_USER_ID, DEFAULT_TEAM_ID } from './slack-fake-ids.js';
import { parseSlackRequestArguments } from './slack-request-arguments.js';

export type { StoredSlackMessage } from './fake-slack-state.js';

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
  setMethodHandler(method: string, handler: SlackMethodOverride | undefined): void;
  reset(): void;
  close(): Promise<void>;
}

const METHODS: Record<string, SlackMethodHandler> = {
  ...MESSAGE_METHODS,
  ...STREAM_METHODS,
  ...VIEW_METHODS,
  ...WORKSPACE_METHODS,
};

/** Used when a 429 is injected without a delay: WebClient treats a 429 lacking Retry-After as fatal. */
const DEFAULT_RETRY_AFTER_SECONDS = 1;

function sendInjectedFailure(options: { response: ServerResponse; failure: SlackFailure }): void {
  const { response, failure } = options;
  if ('error' in failure) {
    sendJson({ response, body: { ok: false, error: failure.error } });
    return;
  }
  const retryAfter = failure.status === 429 ? (failure.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS) : failure.retryAfterSeconds;
  sendJson({
    response,
    status: failure.status,
    body: { ok: false, error: failure.status === 429 ? 'ratelimited' : 'fake_http_error' },
    headers: retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) },
  });
}

export async function startFakeSlackApi(options: { botUserId?: string; botId?: string; teamId?: string } = {}): Promise<FakeSlackApi> {
  const state = createFakeSlackState({
    identity: {
      botUserId: options.botUserId ?? DEFAULT_BOT_USER_ID,
      botId: options.botId ?? DEFAULT_BOT_ID,
      teamId: options.teamId ?? DEFAULT_TEAM_ID,
      appId: API_APP_ID,
    },
  });
  const calls: RecordedSlackCall[] = [];
  const failures = new Map<string, SlackFailure[]>();
  const overrides = new Map<string, SlackMethodOverride>();
  const conditionalFailures = new Map<string, { predicate: (call: RecordedSlackCall) => boolean; failure: SlackFailure }>();
  const waiters = createConditionWaiters();

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const method = /^\/api\/([^/?]+)/.exec(request.url ?? '')?.[1];
    const body = await readRequestBody(request);
    if (method === undefined) {
      sendJson({ response, status: 404, body: { ok: false, error: 'fake-slack-api: expected POST /api/<method>' } });
      return;
    }
    const { args, token } = parseSlackRequestArguments({ headers: request.headers, body });
    const call: RecordedSlackCall = { method, args, token, at: Date.now() };
    const conditional = conditionalFailures.get(method);
    const failure = failures.get(method)?.shift() ?? (conditional && predicateHolds({ predicate: conditional.predicate, call }) ? conditional.failure : undefined);
    const override = overrides.get(method);
    // The answer is computed (and state changed) before waiters run, so a resolved
    // waitForCall already sees the effect in messages().
    const answer = failure ? undefined : override ? await override(call) : answerFor({ method, args });
    calls.push(call);
    waiters.recheck();
    if (failure) sendInjectedFailure({ response, failure });
    else sendJson({ response, body: answer });
  }

  function answerFor(options: { method: string; args: Record<string, any> }): SlackAnswer {
    const handler = METHODS[options.method];
    return handler ? handler({ args: options.args, state }) : { ok: false, error: 'unknown_method' };
  }

  const loopback = await listenOnLoopback({ listener: handle });

  return {
    url: `http://127.0.0.1:${loopback.port}/api/`,
    calls,
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
      const selected = threadTs === undefined ? (state.messagesByChannel.get(channel) ?? []) : threadMessages({ state, channel, threadTs });
      return structuredClone(selected);
    },
    addMessage(channel, message) {
      const stored = state.storeMessage({
        channel,
        ts: message.ts ?? state.nextTs(),
        ...(message.thread_ts === undefined ? {} : { thread_ts: message.thread_ts }),
        user: message.user,
        ...(message.bot_id === undefined ? {} : { bot_id: message.bot_id }),
        text: message.text,
      });
      return structuredClone(stored);
    },
    failNext(method, failure, times = 1) {
      const queued = failures.get(method) ?? [];
      queued.push(...Array.from({ length: times }, () => failure));
      failures.set(method, queued);
    },
    failWhen(method, predicate, failure = { status: 500 }) {
      if (predicate) conditionalFailures.set(method, { predicate, failure });
      else conditionalFailures.delete(method);
    },
    setUsergroupUsers(usergroup, users) {
      state.usergroupUsers.set(usergroup, [...users]);
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
      await loopback.close();
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
