import type { RetryOptions } from '@slack/web-api';
import { SlackCallError } from '../errors/countersign-error.js';

/**
 * Calls that show something new each time Slack applies them: sent twice, the thread shows the answer
 * twice, a second approval card (the first keeps live buttons nobody updates), streamed text twice.
 */
const UNREPEATABLE_METHODS = new Set([
  'chat.postMessage',
  'chat.postEphemeral',
  'chat.scheduleMessage',
  'chat.meMessage',
  'chat.startStream',
  'chat.appendStream',
  'chat.stopStream',
  'files.completeUploadExternal',
]);

/** Every error the guard threw: a write Slack may or may not have applied. */
const unconfirmed = new WeakSet<object>();
/** The HTTP status of the answer behind such an error, when one came. */
const answeredWith = new WeakMap<object, number>();

/** The guard's error in what a Web API call threw: itself, or what the client hands on as `original`. */
function guardErrorOf(error: unknown): object | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  if (unconfirmed.has(error)) return error;
  const original = (error as { original?: unknown }).original;
  return typeof original === 'object' && original !== null && unconfirmed.has(original) ? original : undefined;
}

/**
 * Whether `error` (what a Web API call threw) is the guard's refusal to send a write again: Slack may have
 * applied it, so what it posted, if anything, can only be found by reading the conversation.
 */
export function mayHaveBeenApplied(error: unknown): boolean {
  return guardErrorOf(error) !== undefined;
}

/**
 * The HTTP status the write behind the guard's refusal was answered with (a 5xx, a 4xx from Slack or
 * an edge before it); undefined when no answer came (a timeout, a connection lost after the request
 * went out) or for any other error. Whether a later try may get past it depends on it.
 */
export function unconfirmedWriteStatus(error: unknown): number | undefined {
  const guardError = guardErrorOf(error);
  return guardError === undefined ? undefined : answeredWith.get(guardError);
}

/** The error for a write that was sent but whose outcome is unknown: it is not sent again. `status`: the HTTP answer it got, if any. */
export function unconfirmedWriteError({ method, cause, status }: { method: string; cause: unknown; status?: number }): SlackCallError {
  const error = new SlackCallError({ method, cause });
  unconfirmed.add(error);
  if (status !== undefined) answeredWith.set(error, status);
  return error;
}

/** Errors of the connection itself: no connection, so the request never reached Slack. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * Keeps the Web API client from sending a write again when Slack may already have applied it. The
 * client retries every failure alike; but a timeout, a connection lost after the request went out or
 * a 5xx from Slack's edge can come after Slack posted the message. For the calls above `fetch` turns
 * such a failure into an error the retry policy's `onFailedAttempt` refuses to retry, so it reaches
 * the caller (which says so in the thread; an answer first looks for the message it may have posted,
 * `answer/unconfirmed-post.ts`). A 429 (Slack applied nothing) and a connection that was
 * never made are retried as before; other calls (reads, `chat.update`, `views.*`) keep every retry.
 */
export function createUnrepeatedSlackWrites({ retryConfig, fetch }: { retryConfig: RetryOptions; fetch: typeof globalThis.fetch }) {
  const guardedFetch: typeof globalThis.fetch = async (input, init) => {
    const method = methodOf(input);
    if (!UNREPEATABLE_METHODS.has(method)) return fetch(input, init);
    const refuse = (cause: unknown, status?: number): never => {
      throw unconfirmedWriteError({ method, cause, ...(status === undefined ? {} : { status }) });
    };
    let response: Response;
    try {
      response = await fetch(input, init);
    } catch (error) {
      if (neverSent(error)) throw error;
      return refuse(new Error(`${errorText(error)}; it may have been posted all the same, so it was not sent again`));
    }
    if (response.status === 200 || response.status === 429) return response;
    await response.body?.cancel().catch(() => {});
    return refuse(new Error(`HTTP ${response.status}; it may have been posted all the same, so it was not sent again`), response.status);
  };

  return {
    fetch: guardedFetch,
    // p-retry, which the client hands this config to, reads `onFailedAttempt`; the client's type for
    // it (node-retry's options) does not list it.
    retryConfig: {
      ...retryConfig,
      // The client wraps what fetch throws (`original`); throwing here ends the retries with it.
      onFailedAttempt: (error: Error & { original?: unknown }) => {
        if (mayHaveBeenApplied(error)) throw error;
      },
    } as RetryOptions,
  };
}

/** `https://slack.com/api/chat.postMessage` → `chat.postMessage`. */
function methodOf(input: string | URL | Request): string {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  return URL.parse(url)?.pathname.split('/').pop() ?? '';
}

function neverSent(error: unknown): boolean {
  const cause = error instanceof Error ? error.cause : undefined;
  return [error, cause, ...(cause instanceof AggregateError ? cause.errors : [])].some((each) => NOT_SENT_CODES.has(codeOf(each) ?? ''));
}

function codeOf(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/** `fetch failed: other side closed`: fetch's own message says nothing of what happened. */
function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message;
}
