import { WebClient } from '@slack/web-api';

/**
 * `value` with every string in it well-formed (`String.prototype.toWellFormed`: a lone UTF-16
 * surrogate becomes U+FFFD), through arrays and plain objects; anything else (a Buffer, a stream) as
 * it is. Nothing else about the text changes.
 */
export function wellFormedArguments<T>(value: T): T {
  if (typeof value === 'string') return value.toWellFormed() as T;
  if (Array.isArray(value)) return value.map(wellFormedArguments) as T;
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, each]) => [key, wellFormedArguments(each)])) as T;
}

/** What Slack receives of `text` sent as a call's argument (`wellFormedArguments`). */
export function asSentToSlack(text: string): string {
  return text.toWellFormed();
}

const INSTALLED = Symbol.for('countersign.wellFormedSlackArguments');

/**
 * Makes every Web API client made from now on send its calls' arguments well-formed
 * (`wellFormedArguments`). The client form-encodes a call's top-level strings with
 * `node:querystring`, which throws "URI malformed" on a lone surrogate before anything is sent: an
 * answer the model cut mid-emoji ("Deployed \ud83d") was lost, and the notice quoting it with it.
 * Blocks and views are sent as JSON, which keeps the lone surrogate as an escape Slack may refuse.
 *
 * Done on `WebClient.prototype.apiCall`, which every method (`chat.postMessage`, the `chat.*Stream`
 * calls, `views.*`, `files.uploadV2`'s own calls, pagination) is bound to when a client is made:
 * Bolt makes the clients its listeners are handed itself, one per workspace, so no client of ours
 * (a subclass, a wrapper) would reach them. Installed once per process; later calls do nothing.
 */
export function sendWellFormedSlackArguments(): void {
  const prototype = WebClient.prototype as WebClient & { [INSTALLED]?: true };
  if (prototype[INSTALLED]) return;
  const apiCall = prototype.apiCall;
  prototype.apiCall = function wellFormedApiCall(this: WebClient, method, options) {
    return apiCall.call(this, method, options === undefined ? options : wellFormedArguments(options));
  };
  prototype[INSTALLED] = true;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
