import { z } from 'zod';
import { ConfigError, type ConfigProblem } from '../../config/config-error.js';
import { HTTP_REQUEST_METHODS, HTTP_REQUEST_PARAMETERS, HTTP_REQUEST_TOOL_NAME, RESERVED_HTTP_HEADERS, type HttpBaseConfig, type HttpConfig } from '../../config/http-config-schema.js';
import { wholeMilliseconds } from '../../config/duration.js';
import type { ExecutableToolDefinition, ToolContext } from '../tool-definition.js';
import { ToolNotStartedError, type ToolNotStartedReason } from '../tool-not-started-error.js';
import { describeBases, findAllowedBase } from './allowed-base.js';
import { canonicalUrl, urlSpellingProblem } from './canonical-url.js';
import { fingerprintOf } from '../definition-fingerprint.js';
import { resolveTemplates } from './header-templates.js';
import { createRedactor, type Redactor } from './redact.js';

export { HTTP_REQUEST_TOOL_NAME };
// The config checks policy conditions against this list: it must name only real input fields.
HTTP_REQUEST_PARAMETERS satisfies readonly (keyof HttpRequestInput)[];

export type HttpMethod = (typeof HTTP_REQUEST_METHODS)[number];
/** Methods that only read: they run without approval unless a policy rule says otherwise. */
export const SAFE_HTTP_METHODS: ReadonlySet<HttpMethod> = new Set(['GET', 'HEAD']);

/** Response headers worth showing the model; everything else (cookies above all) is dropped. */
const SHOWN_RESPONSE_HEADERS = new Set(['content-type', 'content-length', 'location', 'retry-after', 'etag', 'last-modified', 'link', 'x-request-id', 'www-authenticate']);
const SHOWN_RESPONSE_HEADER_PREFIXES = ['x-ratelimit-', 'ratelimit'];
const TEXTUAL_CONTENT = /^(text\/|application\/([\w.+-]*\+)?(json|xml|javascript|x-www-form-urlencoded|yaml|x-yaml|graphql|problem\+json)\b)/i;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/**
 * Headers some servers and proxies honour to act on another method or path than the one sent: a GET
 * (which runs without a card) carrying one could become a DELETE, or reach a path a policy rule guards.
 */
const METHOD_OR_PATH_OVERRIDE_HEADERS = new Set(['x-http-method-override', 'x-http-method', 'x-method-override', 'x-original-url', 'x-rewrite-url']);
/** Connection errors raised before anything was sent: such a request certainly did not reach the server. */
const NOT_CONNECTED_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ERR_INVALID_URL']);

export interface HttpRequestInput {
  method: HttpMethod;
  url: string;
  headers?: Record<string, string> | undefined;
  body?: string | undefined;
}

export interface HttpRequestOutput {
  status: number;
  statusText: string;
  url: string;
  headers: Record<string, string>;
  /** The body as text, cut to the configured limit; secrets the bot sent are replaced with [redacted]. */
  body: string;
  /** True when the body was cut (by the byte cap while reading, or the character limit for the model). */
  truncated: boolean;
  /** Bytes of the body kept (at most `maxResponseBytes`; a few more are read to redact across the cut). */
  bytes: number;
  /** Set when the body stopped arriving after the status did: the request was answered, the body is partial. */
  note?: string;
}

interface ResolvedBase extends HttpBaseConfig {
  /** Headers with `${VAR}` filled in; never shown anywhere. */
  resolvedHeaders: Record<string, string>;
}

export interface CreateHttpRequestToolOptions {
  /** Where `${VAR}` placeholders are read; default `process.env`. */
  env?: Record<string, string | undefined>;
  /** Injectable for tests; default the global `fetch`. */
  fetch?: typeof fetch;
}

/**
 * The `http_request` tool: one tool the model uses for any of the configured APIs. A URL outside
 * the bases fails the input schema, so it is refused before any approval card or network call
 * (and an approver's edit is checked the same way). Configured headers are added at execution from
 * the environment; the model, the card and the logs only ever see the request without them.
 */
export function createHttpRequestTool(
  config: HttpConfig,
  options: CreateHttpRequestToolOptions = {},
): ExecutableToolDefinition<HttpRequestInput, HttpRequestOutput> & { inputSchema: ReturnType<typeof httpRequestInputSchema> } {
  const env = options.env ?? process.env;
  const fetchImpl = options.fetch ?? fetch;
  const problems: ConfigProblem[] = [];
  const secrets: string[] = [];
  const bases: ResolvedBase[] = config.bases.map((base, index) => {
    const resolved = resolveTemplates(base.headers, env, `http.bases[${index}].headers`, problems);
    secrets.push(...resolved.secrets);
    return { ...base, resolvedHeaders: resolved.values };
  });
  if (problems.length > 0) throw new ConfigError({ problems });
  const redact = createRedactor(secrets);
  const inputSchema = httpRequestInputSchema(bases);

  return {
    name: HTTP_REQUEST_TOOL_NAME,
    description: describeTool(bases),
    inputSchema,
    // A policy rule for http_request (e.g. on `method` or `url`) outranks this.
    approval: (input) => !SAFE_HTTP_METHODS.has(input.method),
    // Where requests may go and the headers added there, as templates: never the values read into them.
    definitionFingerprint: fingerprintOf({ kind: 'http', bases: config.bases.map((base) => ({ url: base.url, headers: base.headers })) }),
    async execute(input, context) {
      // Parsed again: an approver may have edited the input since the model sent it.
      const parsed = inputSchema.safeParse(input);
      if (!parsed.success) throw notSent('invalid-input', `Invalid input for ${HTTP_REQUEST_TOOL_NAME}:\n${z.prettifyError(parsed.error)}`);
      const request = parsed.data;
      // What was gated, shown and approved is the canonical spelling: a stored URL in another one
      // was never checked as the request that would be sent, so it is refused, not rewritten.
      if (request.url !== input.url) throw notSent('url-refused', `Refused: ${input.url} is not written as the URL that would be sent (${request.url}), so it is not the request that was checked. Nothing was sent.`);
      const allowed = findAllowedBase(bases, request.url);
      if (!allowed) throw notSent('url-refused', `Refused: ${request.url} is not under an allowed base (${describeBases(bases)}). Nothing was sent.`);
      return send({ request, base: allowed.base, url: allowed.url, context, config, fetchImpl, redact });
    },
  };
}

/**
 * A refusal before the request left: it comes after the turn wrote the call's start marker, and a
 * `ToolNotStartedError` has the turn record the call as not run, not as run and failed.
 */
function notSent(reason: ToolNotStartedReason, message: string): ToolNotStartedError {
  return new ToolNotStartedError({ toolName: HTTP_REQUEST_TOOL_NAME, reason, message });
}

function describeTool(bases: readonly ResolvedBase[]): string {
  const lines = bases.map((base) => `- ${base.url}${base.description ? ` — ${base.description}` : ''}`);
  return [
    'Send an HTTP request to one of these APIs (authentication is added for you; never put credentials in headers):',
    ...lines,
    'GET and HEAD run at once; other methods wait for a human to approve. The response body is cut to a limit.',
  ].join('\n');
}

function httpRequestInputSchema(bases: readonly ResolvedBase[]) {
  return z
    .object({
      method: z.enum(HTTP_REQUEST_METHODS).describe('HTTP method'),
      url: z
        .string()
        .min(1)
        .max(4000)
        .describe(`Absolute URL under one of: ${describeBases(bases)}`)
        .superRefine((url, context) => {
          const problem = urlSpellingProblem(url);
          if (problem) context.addIssue({ code: 'custom', message: problem });
          else if (!findAllowedBase(bases, canonicalUrl(url))) context.addIssue({ code: 'custom', message: `is not under an allowed base URL (${describeBases(bases)})` });
        })
        // Policy rules, the card, the approval and the request all see this one spelling (see canonical-url.ts).
        .overwrite(canonicalUrl),
      // An object with string values rather than a record: records become `propertyNames`, which OpenAI rejects.
      headers: z.object({}).catchall(z.string().max(4000)).optional().describe('Extra request headers, e.g. {"Accept": "application/json"}'),
      body: z.string().max(1_000_000).optional().describe('Request body as text (e.g. a JSON document); not for GET or HEAD'),
    })
    .superRefine((input, context) => {
      if (input.body !== undefined && SAFE_HTTP_METHODS.has(input.method)) {
        context.addIssue({ code: 'custom', path: ['body'], message: `is not allowed with ${input.method}` });
      }
      const configured = new Set(Object.keys(findAllowedBase(bases, input.url)?.base.resolvedHeaders ?? {}).map((name) => name.toLowerCase()));
      for (const name of Object.keys(input.headers ?? {})) {
        const lower = name.toLowerCase();
        if (!HEADER_NAME.test(name)) context.addIssue({ code: 'custom', path: ['headers', name], message: 'is not a valid header name' });
        else if (RESERVED_HTTP_HEADERS.has(lower)) context.addIssue({ code: 'custom', path: ['headers', name], message: 'is set by the bot' });
        else if (METHOD_OR_PATH_OVERRIDE_HEADERS.has(lower)) context.addIssue({ code: 'custom', path: ['headers', name], message: 'could make the server act on another method or path than the one approved, so it cannot be set' });
        else if (configured.has(lower)) context.addIssue({ code: 'custom', path: ['headers', name], message: 'is configured for this API and cannot be overridden' });
      }
    });
}

async function send(options: {
  request: HttpRequestInput;
  base: ResolvedBase;
  url: URL;
  context: ToolContext;
  config: HttpConfig;
  fetchImpl: typeof fetch;
  redact: Redactor;
}): Promise<HttpRequestOutput> {
  const { request, base, url, context, config, redact } = options;
  let headers: Headers;
  try {
    headers = requestHeaders(request, base);
  } catch (error) {
    // Headers.set quotes the whole value it refuses, which may hold a configured secret.
    throw notSent('header-refused', redact(error instanceof Error ? error.message : String(error)));
  }

  const timeoutMs = wholeMilliseconds(config.timeoutSeconds, 's');
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = context.abortSignal ? AbortSignal.any([timeout, context.abortSignal]) : timeout;
  let response: Response;
  try {
    response = await options.fetchImpl(url.href, {
      method: request.method,
      headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      // A redirect could lead off the allowed bases with our headers; the model sees it instead.
      redirect: 'manual',
      signal,
    });
  } catch (error) {
    throw new Error(redact(failureMessage({ error, timeout, timeoutMs, url, method: request.method, turnSignal: context.abortSignal })));
  }

  // Read past the cap by the longest form of a secret: a secret echoed across the cap is then seen
  // whole, redacted, and only then cut (cutting first would hand the model its first half).
  const cap = config.maxResponseBytes;
  const read = await readCapped(response, cap + redact.lookaheadBytes);
  // The server answered: a body cut off now is reported with its status, never as a request that
  // failed, so nobody runs again what was already done. The last bytes received are held back like
  // the bytes past the cap: they could be the start of a secret whose rest never came.
  const kept = read.interruption === undefined ? cap : Math.min(cap, Math.max(0, read.bytes.length - redact.lookaheadBytes));
  const overCap = read.bytes.length > kept;
  const bytes = Math.min(read.bytes.length, kept);
  const contentType = response.headers.get('content-type') ?? '';
  let body: string;
  let truncated = read.truncated || overCap || read.interruption !== undefined;
  if (bytes === 0) body = '';
  else if (contentType === '' || TEXTUAL_CONTENT.test(contentType)) {
    body = redactThenCut(read.bytes, kept, redact);
    if (body.length > config.bodyLimit) {
      body = `${body.slice(0, config.bodyLimit)}\n… [cut: ${body.length - config.bodyLimit} more characters]`;
      truncated = true;
    }
  } else body = `[${bytes}${truncated ? '+' : ''} bytes of ${contentType} not shown]`;

  return {
    status: response.status,
    statusText: redact(response.statusText),
    url: url.href,
    headers: shownHeaders(response.headers, redact),
    body,
    truncated,
    bytes,
    ...(read.interruption === undefined
      ? {}
      : { note: redact(`The server answered ${response.status}, then the body was cut off (${interruptionReason({ error: read.interruption, timeout, timeoutMs, turnSignal: context.abortSignal })}); the request was processed as that status says.`) }),
  };
}

function requestHeaders(request: HttpRequestInput, base: ResolvedBase): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers ?? {})) headers.set(name, value);
  if (request.body !== undefined && !headers.has('content-type')) headers.set('content-type', isJson(request.body) ? 'application/json' : 'text/plain; charset=utf-8');
  // Configured headers last: they win over anything the model asked for.
  for (const [name, value] of Object.entries(base.resolvedHeaders)) {
    try {
      headers.set(name, value);
    } catch {
      // Named, never quoted: the value is filled in from the environment (a secret read from a
      // file with its trailing newline is the usual cause).
      throw new Error(
        `Refused: the header ${name} configured for ${base.url} is not a valid header value once its \${VAR} placeholders are filled in (a line break or another control character in an environment variable?). Nothing was sent.`,
      );
    }
  }
  return headers;
}

/**
 * The text of the first `cap` bytes of `bytes`, redacted: the whole of `bytes` (which reaches past
 * the cap by `redact.lookaheadBytes` when there was more) is redacted first, then cut where the cap
 * falls (at a character boundary), so a secret straddling the cap is replaced whole.
 */
function redactThenCut(bytes: Uint8Array, cap: number, redact: Redactor): string {
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  if (bytes.length <= cap) return redact(text);
  let cut = cap;
  // Back to the start of a UTF-8 sequence (continuation bytes are 10xxxxxx).
  for (let back = 0; back < 3 && cut > 0 && ((bytes[cut] ?? 0) & 0xc0) === 0x80; back += 1) cut -= 1;
  const end = new TextDecoder('utf-8', { fatal: false }).decode(bytes.subarray(0, cut)).length;
  return redact.head(text, end);
}

/**
 * Reads at most `limit` bytes and cancels the rest of the download. A read that fails (connection
 * closed, timeout, abort) keeps what arrived and says why in `interruption`.
 */
async function readCapped(response: Response, limit: number): Promise<{ bytes: Uint8Array; truncated: boolean; interruption?: unknown }> {
  if (!response.body) return { bytes: new Uint8Array(), truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let truncated = false;
  let interruption: unknown;
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch (error) {
      interruption = error ?? new Error('the body stopped');
      await reader.cancel().catch(() => {});
      break;
    }
    const { done, value } = chunk;
    if (done) break;
    const room = limit - total;
    if (value.length > room) {
      chunks.push(value.subarray(0, room));
      total += room;
      truncated = true;
      await reader.cancel().catch(() => {});
      break;
    }
    chunks.push(value);
    total += value.length;
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return interruption === undefined ? { bytes, truncated } : { bytes, truncated, interruption };
}

function shownHeaders(headers: Headers, redact: Redactor): Record<string, string> {
  const shown: Record<string, string> = {};
  headers.forEach((value, name) => {
    const lower = name.toLowerCase();
    if (SHOWN_RESPONSE_HEADERS.has(lower) || SHOWN_RESPONSE_HEADER_PREFIXES.some((prefix) => lower.startsWith(prefix))) shown[lower] = redact(value);
  });
  return shown;
}

/** Why a request that got no answer failed, saying whether it may have been processed. */
function failureMessage(options: { error: unknown; timeout: AbortSignal; timeoutMs: number; url: URL; method: HttpMethod; turnSignal: AbortSignal | undefined }): string {
  const { error, timeout, timeoutMs, url, method, turnSignal } = options;
  const where = `${url.origin}${url.pathname}`;
  if (timeout.aborted) return `${where} did not answer within ${timeoutMs / 1000} s; the request was abandoned (it may or may not have been processed).`;
  if (turnSignal?.aborted) return `request to ${where} was abandoned because the turn stopped; it may or may not have been processed.`;
  const failed = `request to ${where} failed: ${causeOf(error)}`;
  // A connection that broke after the request went out may have delivered it: a write is not safe to assume undone.
  if (SAFE_HTTP_METHODS.has(method) || NOT_CONNECTED_CODES.has(errorCode(error) ?? '')) return failed;
  return `${failed}; the ${method} may have reached the server and been processed.`;
}

function interruptionReason(options: { error: unknown; timeout: AbortSignal; timeoutMs: number; turnSignal: AbortSignal | undefined }): string {
  if (options.timeout.aborted) return `the rest did not arrive within ${options.timeoutMs / 1000} s`;
  if (options.turnSignal?.aborted) return 'the turn stopped, so the rest was not read';
  return `connection closed: ${causeOf(options.error)}`;
}

function causeOf(error: unknown): string {
  return error instanceof Error ? ((error.cause instanceof Error ? error.cause.message : undefined) ?? error.message) : String(error);
}

function errorCode(error: unknown): string | undefined {
  const candidate = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = candidate instanceof Error ? (candidate as Error & { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
