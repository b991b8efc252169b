import type { IncomingMessage, ServerResponse } from 'node:http';
import { createConditionWaiters } from './condition-waiters.js';
import { listenOnLoopback, readRequestBody, sendJson } from './loopback-http.js';
import { chatCompletionBody, chatCompletionChunks } from './openai-chat-completions-reply.js';
import { responsesBody, responsesEvents, responsesOutputItems } from './openai-responses-reply.js';
import { estimateTokens, replyText, resolveToolCalls, type ModelAnswer, type ScriptedReply } from './scripted-reply.js';

export { conversationOf, type ConversationEntry, type ConversationToolCall } from './model-conversation.js';
export type { ScriptedReply } from './scripted-reply.js';

export interface RecordedModelRequest {
  api: 'chat' | 'responses';
  path: string;
  body: any;
  headers: Record<string, string | string[] | undefined>;
}

export interface FakeOpenAI {
  baseURL: string;
  requests: RecordedModelRequest[];
  enqueue(...replies: ScriptedReply[]): void;
  setResponder(responder: ((request: RecordedModelRequest) => ScriptedReply | Promise<ScriptedReply>) | undefined): void;
  waitForRequests(count: number, options?: { timeoutMs?: number }): Promise<RecordedModelRequest[]>;
  close(): Promise<void>;
}

const API_BY_PATH: Record<string, RecordedModelRequest['api']> = {
  '/v1/chat/completions': 'chat',
  '/v1/responses': 'responses',
};

/** A loopback OpenAI for the real `@ai-sdk/openai` provider: `createOpenAI({ baseURL, apiKey })`. */
export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const requests: RecordedModelRequest[] = [];
  const queue: ScriptedReply[] = [];
  let responder: ((request: RecordedModelRequest) => ScriptedReply | Promise<ScriptedReply>) | undefined;
  let responseSequence = 0;
  let toolCallSequence = 0;
  const waiters = createConditionWaiters();

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '').split('?')[0] ?? '';
    const api = API_BY_PATH[path];
    const rawBody = await readRequestBody(request);
    if (request.method !== 'POST' || api === undefined) {
      sendOpenAIError({ response, status: 404, message: `fake-openai: no route for ${request.method} ${path}` });
      return;
    }
    const recorded: RecordedModelRequest = { api, path, body: parseJson(rawBody), headers: { ...request.headers } };
    requests.push(recorded);
    waiters.recheck();

    let reply: ScriptedReply | undefined;
    try {
      reply = responder ? await responder(recorded) : queue.shift();
    } catch (error) {
      sendOpenAIError({ response, status: 500, message: `fake-openai: responder threw: ${String(error)}` });
      return;
    }
    if (reply === undefined) {
      sendOpenAIError({ response, status: 500, message: 'fake-openai: no scripted reply' });
      return;
    }
    // Left open on purpose; close() (or the client's abort) ends the connection.
    if ('hang' in reply) return;
    if ('drop' in reply) {
      request.socket.destroy();
      return;
    }
    if ('error' in reply) {
      sendOpenAIError({ response, status: reply.error.status, message: reply.error.message ?? `fake-openai: scripted ${reply.error.status} error` });
      return;
    }
    responseSequence += 1;
    const answer = buildAnswer({ reply, recorded, responseSequence, nextToolCallId: () => `call_${++toolCallSequence}` });
    const deltaDelayMs = 'deltaDelayMs' in reply ? (reply.deltaDelayMs ?? 0) : 0;
    if (api === 'chat') sendChat({ response, answer, body: recorded.body, deltaDelayMs });
    else sendResponses({ response, answer, body: recorded.body, deltaDelayMs });
  }

  const loopback = await listenOnLoopback({ listener: handle });

  return {
    baseURL: `http://127.0.0.1:${loopback.port}/v1`,
    requests,
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    setResponder: (next) => {
      responder = next;
    },
    waitForRequests(count, options) {
      return waiters.waitFor({
        check: () => (requests.length >= count ? requests.slice(0, count) : undefined),
        timeoutMs: options?.timeoutMs ?? 5000,
        describeTimeout: (timeoutMs) =>
          `fake-openai: expected ${count} model request(s) within ${timeoutMs} ms, got ${requests.length}` +
          (requests.length > 0 ? `: ${requests.map((request) => request.path).join(', ')}` : ''),
      });
    },
    async close() {
      waiters.cancelAll('fake-openai: closed while waiting');
      await loopback.close();
    },
  };
}

function buildAnswer(options: {
  reply: Exclude<ScriptedReply, { hang: true } | { drop: true } | { error: unknown }>;
  recorded: RecordedModelRequest;
  responseSequence: number;
  nextToolCallId: () => string;
}): ModelAnswer {
  const { reply, recorded } = options;
  const text = replyText(reply);
  const toolCalls = resolveToolCalls({ reply, nextToolCallId: options.nextToolCallId });
  const sequence = String(options.responseSequence).padStart(6, '0');
  return {
    responseId: recorded.api === 'chat' ? `chatcmpl-fake${sequence}` : `resp_fake${sequence}`,
    model: typeof recorded.body?.model === 'string' ? recorded.body.model : 'gpt-4o-mini',
    createdAtSeconds: Math.floor(Date.now() / 1000),
    text,
    toolCalls,
    usage: {
      inputTokens: estimateTokens(recorded.body?.messages ?? recorded.body?.input ?? ''),
      outputTokens: estimateTokens((text ?? '') + toolCalls.map((toolCall) => toolCall.arguments).join('')),
    },
  };
}

function sendChat(options: { response: ServerResponse; answer: ModelAnswer; body: any; deltaDelayMs: number }): void {
  if (options.body?.stream !== true) {
    sendJson({ response: options.response, body: chatCompletionBody(options.answer) });
    return;
  }
  const includeUsage = options.body?.stream_options?.include_usage === true;
  const lines = chatCompletionChunks({ answer: options.answer, includeUsage }).map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`);
  sendEventStream({ response: options.response, events: [...lines, 'data: [DONE]\n\n'], deltaDelayMs: options.deltaDelayMs });
}

function sendResponses(options: { response: ServerResponse; answer: ModelAnswer; body: any; deltaDelayMs: number }): void {
  const output = responsesOutputItems(options.answer);
  if (options.body?.stream !== true) {
    sendJson({ response: options.response, body: responsesBody({ answer: options.answer, output, requestBody: options.body }) });
    return;
  }
  const events = responsesEvents({ answer: options.answer, output, requestBody: options.body });
  sendEventStream({
    response: options.response,
    events: events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`),
    deltaDelayMs: options.deltaDelayMs,
  });
}

/** All at once, or one event at a time with a pause between, as a slow model streams. */
function sendEventStream(options: { response: ServerResponse; events: string[]; deltaDelayMs: number }): void {
  const { response, events, deltaDelayMs } = options;
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  if (deltaDelayMs <= 0) {
    response.end(events.join(''));
    return;
  }
  const writeFrom = (index: number) => {
    if (response.destroyed) return;
    if (index >= events.length) {
      response.end();
      return;
    }
    response.write(events[index]);
    setTimeout(() => writeFrom(index + 1), deltaDelayMs);
  };
  writeFrom(0);
}

/** OpenAI's error envelope; @ai-sdk/openai turns `error.message` into the APICallError message. */
function sendOpenAIError(options: { response: ServerResponse; status: number; message: string }): void {
  const type = options.status >= 500 ? 'server_error' : options.status === 429 ? 'rate_limit_exceeded' : 'invalid_request_error';
  sendJson({ response: options.response, status: options.status, body: { error: { message: options.message, type, param: null, code: null } } });
}

function parseJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
