import { STATUS_CODES } from 'node:http';
import { Readable } from 'node:stream';
import { Agent, request, type Dispatcher } from 'undici';

export interface LeanFetchOptions {
  /** Where requests outside the common case go; `globalThis.fetch` unless given. */
  fallback?: typeof globalThis.fetch;
  /** The connection pool; a fresh undici `Agent` (fetch's defaults) unless given. */
  dispatcher?: Dispatcher;
  /** Read for `NODE_USE_ENV_PROXY`; `process.env` unless given. */
  environment?: Readonly<Record<string, string | undefined>>;
}

/** Bodies a reader consumes as they arrive; any other body is read whole before the response is returned. */
const STREAMED_CONTENT_TYPES = ['text/event-stream', 'application/x-ndjson'];
/** Statuses whose response must have no body (the `Response` constructor refuses one). */
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/**
 * A `fetch` for the two clients on every click's path, the Slack Web API and the model provider:
 * the same requests over undici's `request`, which costs a fraction of the CPU of Node's `fetch`
 * (the spec's request and response machinery runs on web streams even for a small JSON reply): a
 * Slack call through the Slack client about 0.6× the CPU, a streamed model call about 0.95×
 * (bench/probes/http-client.probe.ts).
 *
 * It takes the common case only, a request with a string body or none, and hands everything else
 * to `fallback` unchanged: form data and stream bodies (file uploads), `redirect: 'manual'`, a request
 * that sets Accept-Encoding (the lean path asks for none, so it never has to decode), and
 * any request when `NODE_USE_ENV_PROXY` asks Node's fetch to use the environment's proxy. A redirect
 * response is asked again through `fallback`, which applies fetch's rules to it. Failures look as
 * fetch's do, since callers branch on them: a network error rejects with `TypeError('fetch failed')`
 * (the AI SDK retries those), an abort with the signal's reason.
 */
export function createLeanFetch(options: LeanFetchOptions = {}): typeof globalThis.fetch {
  const fallback = options.fallback ?? globalThis.fetch;
  const environment = options.environment ?? process.env;
  if (environment.NODE_USE_ENV_PROXY) return fallback;
  const dispatcher = options.dispatcher ?? new Agent();
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : undefined;
    const body = init?.body;
    const headers = headerRecord(init?.headers);
    const simple =
      url !== undefined &&
      /^https?:/i.test(url) &&
      (body === undefined || body === null || typeof body === 'string') &&
      init?.redirect !== 'manual' &&
      !asksForCompression(headers);
    if (!simple) return fallback(input, init);
    const signal = init?.signal ?? undefined;
    let reply: Dispatcher.ResponseData;
    try {
      reply = await request(url, {
        method: (init?.method ?? 'GET') as Dispatcher.HttpMethod,
        ...(headers === undefined ? {} : { headers }),
        ...(typeof body === 'string' ? { body } : {}),
        ...(signal ? { signal } : {}),
        dispatcher,
      });
    } catch (error) {
      throw asFetchFailure(error, signal);
    }
    const status = reply.statusCode;
    if (status >= 300 && status < 400 && reply.headers.location !== undefined) {
      await reply.body.dump();
      return fallback(input, init);
    }
    const responseInit = { status, statusText: STATUS_CODES[status] ?? '', headers: responseHeaders(reply.headers) };
    if (NULL_BODY_STATUSES.has(status)) {
      await reply.body.dump();
      return new Response(null, responseInit);
    }
    const contentType = responseInit.headers.get('content-type') ?? '';
    if (STREAMED_CONTENT_TYPES.some((type) => contentType.startsWith(type))) {
      return new Response(Readable.toWeb(reply.body) as ReadableStream<Uint8Array>, responseInit);
    }
    try {
      return new Response(await reply.body.bytes(), responseInit);
    } catch (error) {
      throw asFetchFailure(error, signal);
    }
  };
}

/** What fetch rejects with: the abort's reason, else a TypeError with the network error as its cause. */
function asFetchFailure(error: unknown, signal: AbortSignal | undefined): unknown {
  return signal?.aborted ? signal.reason : new TypeError('fetch failed', { cause: error });
}

function headerRecord(headers: RequestInit['headers']): Record<string, string> | undefined {
  if (headers === undefined) return undefined;
  if (headers instanceof Headers || Array.isArray(headers)) return Object.fromEntries(headers);
  return headers as Record<string, string>;
}

/**
 * The lean path sends no Accept-Encoding, so servers answer uncompressed and nothing needs
 * decoding; a caller that asks for compression gets fetch, which decodes it.
 */
function asksForCompression(headers: Record<string, string> | undefined): boolean {
  return headers !== undefined && Object.keys(headers).some((name) => name.toLowerCase() === 'accept-encoding');
}

function responseHeaders(raw: Dispatcher.ResponseData['headers']): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.append(name, value);
  }
  return headers;
}

let shared: typeof globalThis.fetch | undefined;

/** One lean fetch (and connection pool) for the process's Slack and model clients. */
export function sharedLeanFetch(): typeof globalThis.fetch {
  shared ??= createLeanFetch();
  return shared;
}
