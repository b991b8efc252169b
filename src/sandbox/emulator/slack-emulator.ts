import type { IncomingMessage, ServerResponse } from 'node:http';
import { refuseForeignCaller, tokenError } from './caller-checks.js';
import { listenOnLoopback, readRequestBody, sendJson } from './loopback-http.js';
import { API_APP_ID, DEFAULT_BOT_ID, DEFAULT_BOT_USER_ID, DEFAULT_TEAM_ID } from './slack-ids.js';
import { createWorkspaceState, type SlackIdentity, type WorkspaceProfile, type WorkspaceState } from './state/workspace-state.js';
import { MESSAGE_METHODS } from './web-api/message-methods.js';
import { slackError, type SlackAnswer, type SlackMethodHandler } from './web-api/method-answers.js';
import { answerResponseUrl } from './web-api/response-url-answers.js';
import { parseSlackRequestArguments, type SlackArguments } from './web-api/slack-request-arguments.js';
import { STREAM_METHODS } from './web-api/stream-methods.js';
import { VIEW_METHODS } from './web-api/view-methods.js';
import { WORKSPACE_METHODS } from './web-api/workspace-methods.js';

export interface SlackCall {
  method: string;
  args: SlackArguments;
  token: string | undefined;
  at: number;
}

/** An answer given in the emulator's place, e.g. an HTTP 429 a test injects. */
export interface InterceptedAnswer {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface SlackEmulatorOptions {
  identity?: Partial<SlackIdentity>;
  profile?: Partial<WorkspaceProfile>;
  /**
   * The bot's token: Web API calls without it are refused (`not_authed`, `invalid_auth`), as Slack
   * does. Unset, any token is taken (tests' WebClients use made-up ones).
   */
  botToken?: string;
  /** Answers a call instead of the emulator when it returns an answer; the emulator's state is then untouched. */
  intercept?: (call: SlackCall) => InterceptedAnswer | undefined | Promise<InterceptedAnswer | undefined>;
}

/**
 * An in-process Slack: the Web API methods the bot uses (point `SLACK_API_URL` at `url`) over a
 * workspace state that remembers what Slack would, plus the `response_url`s it hands out with
 * interactions. It binds 127.0.0.1 on an ephemeral port and answers only requests addressed to
 * that port by a loopback name and carrying no Origin: the bot's, not a web page's.
 */
export interface SlackEmulator {
  /** Base of the Web API, ending in `/api/`. */
  url: string;
  state: WorkspaceState;
  /** The `response_url` Slack would put in an interaction, for a target added to `state.handles`. */
  responseUrl(targetId: string): string;
  /** Every Web API call, after its answer is decided and before it is sent. */
  onCall(listener: (call: SlackCall) => void): () => void;
  /** Every change to the workspace (messages, ephemerals, views, statuses), by the bot or a person. */
  onChange(listener: () => void): () => void;
  close(): Promise<void>;
}

const METHODS: Record<string, SlackMethodHandler> = {
  ...MESSAGE_METHODS,
  ...STREAM_METHODS,
  ...VIEW_METHODS,
  ...WORKSPACE_METHODS,
};

export async function startSlackEmulator(options: SlackEmulatorOptions = {}): Promise<SlackEmulator> {
  const state = createWorkspaceState({
    identity: { botUserId: DEFAULT_BOT_USER_ID, botId: DEFAULT_BOT_ID, teamId: DEFAULT_TEAM_ID, appId: API_APP_ID, ...options.identity },
    profile: { teamName: 'Fake Workspace', teamDomain: 'fake-workspace', botName: 'countersign', url: 'https://fake-workspace.slack.com/', ...options.profile },
  });
  const callListeners = new Set<(call: SlackCall) => void>();

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const refusal = refuseForeignCaller({ headers: request.headers, port: request.socket.localPort ?? 0 });
    if (refusal) {
      request.resume();
      sendJson({ response, status: refusal.status, body: { ok: false, error: refusal.error } });
      return;
    }
    const path = (request.url ?? '').split('?')[0] ?? '';
    const body = await readRequestBody(request);
    const responseTargetId = /^\/response\/([^/]+)$/.exec(path)?.[1];
    if (responseTargetId !== undefined) return answerResponse({ response, targetId: responseTargetId, body });
    const method = /^\/api\/([^/]+)/.exec(path)?.[1];
    if (method === undefined) {
      sendJson({ response, status: 404, body: { ok: false, error: 'slack-emulator: expected POST /api/<method>' } });
      return;
    }
    const { args, token } = parseSlackRequestArguments({ headers: request.headers, body });
    const refusedToken = tokenError({ token, botToken: options.botToken });
    if (refusedToken !== undefined) {
      sendJson({ response, body: slackError(refusedToken) });
      return;
    }
    const call: SlackCall = { method, args, token, at: Date.now() };
    const intercepted = await options.intercept?.(call);
    // The answer is computed (and state changed) before listeners run, so a listener that resolves
    // a test's wait already sees the effect in the state.
    const answer: InterceptedAnswer = intercepted ?? { body: answerFor({ method, args }) };
    for (const listener of [...callListeners]) listener(call);
    sendJson({ response, ...(answer.status === undefined ? {} : { status: answer.status }), body: answer.body, ...(answer.headers ? { headers: answer.headers } : {}) });
  }

  function answerFor(options: { method: string; args: SlackArguments }): SlackAnswer {
    const handler = METHODS[options.method];
    return handler ? handler({ args: options.args, state }) : slackError('unknown_method');
  }

  function answerResponse(options: { response: ServerResponse; targetId: string; body: string }): void {
    const target = state.handles.responseTarget(options.targetId);
    if (!target) {
      sendJson({ response: options.response, status: 404, body: { ok: false, error: 'expired_url' } });
      return;
    }
    const answer = answerResponseUrl({ state, target, body: parseJsonOrUndefined(options.body) });
    sendJson({ response: options.response, ...answer });
  }

  const loopback = await listenOnLoopback({ listener: handle });
  const origin = `http://127.0.0.1:${loopback.port}`;
  return {
    url: `${origin}/api/`,
    state,
    responseUrl: (targetId) => `${origin}/response/${targetId}`,
    onCall(listener) {
      callListeners.add(listener);
      return () => callListeners.delete(listener);
    },
    onChange: (listener) => state.onChange(listener),
    close: () => loopback.close(),
  };
}

function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
