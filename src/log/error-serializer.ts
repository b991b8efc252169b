import { stdSerializers } from 'pino';
import { keptErrorDetails } from './kept-error-details.js';
import { asText, readField } from './read-field.js';
import { withoutUrlUserinfo } from '../tools/http/url-userinfo.js';

/** Longer string fields are cut: a reply body can be a whole HTML error page. */
const MAX_FIELD_LENGTH = 1_000;
/** More inner errors of an AggregateError are counted, not written (`Promise.any` over many calls). */
const MAX_INNER_ERRORS = 10;

/**
 * How an error is written to the log (`err` and `error`): its type, message and stack (a cause's
 * folded in, as pino does), its own scalar fields, and its nested errors told the same way. Any
 * other field is named in `omitted` and left out (but for a few nested strings an operator needs,
 * `keptErrorDetails`): libraries hang what they sent on their errors, and what they sent holds
 * credentials. ioredis puts the refused command on the error
 * (`command.args`: `HELLO 3 AUTH default <password>` when Redis refuses the password), an HTTP
 * client its request and config (`Authorization` headers), the AI SDK the whole prompt
 * (`requestBodyValues`). Redact paths cannot follow these: they are nested at any depth, under any
 * name. Credentials in a quoted URL are masked too. It never throws: a log call runs in a catch
 * block, where a throw would replace the error being reported; a field that cannot be read is
 * written as `[unreadable]`, a message that is not a string as text.
 */
export function serializeError(value: unknown): unknown {
  if (!isErrorLike(value)) return value;
  try {
    return described(value, new Set());
  } catch {
    // What is left to try when even walking the error throws (a Proxy, say).
    return { type: asText(readField(value, 'name')) || 'Error', message: fieldText(asText(readField(value, 'message'))), unreadable: true };
  }
}

function described(error: Error, seen: Set<object>): Record<string, unknown> {
  seen.add(error);
  const { type, message, stack } = headline(error);
  const out: Record<string, unknown> = { type, message: masked(message), stack: masked(stack) };
  const omitted: string[] = [];
  // Own and inherited enumerable fields, as pino's own serializer reads them.
  for (const key in error) {
    if (key === 'cause' || key in out) continue;
    const field = readField(error, key);
    if (field === undefined || typeof field === 'function') continue;
    if (field === null || typeof field === 'number' || typeof field === 'boolean') out[key] = field;
    else if (typeof field === 'string') out[key] = fieldText(field);
    else if (isErrorLike(field)) {
      if (!seen.has(field)) out[key] = described(field, seen);
    } else if (key === 'errors' && isErrorList(field)) continue;
    else {
      // A few nested strings an operator needs (Slack's refused block, ioredis's command name).
      const kept = typeof field === 'object' ? keptErrorDetails({ key, value: field, text: fieldText }) : undefined;
      if (kept === undefined) omitted.push(key);
      else out[key] = kept;
    }
  }
  // An AggregateError's `errors` is not enumerable, and is all it tells: Node's connect to a host
  // with several addresses (`localhost`: ::1 and 127.0.0.1) fails with an empty message, the
  // refused addresses only in its inner errors. Written as pino did, as `aggregateErrors`.
  const inner = readField(error, 'errors');
  if (isErrorList(inner)) {
    const unseen = inner.filter((each) => !seen.has(each));
    out.aggregateErrors = unseen.slice(0, MAX_INNER_ERRORS).map((each) => described(each, seen));
    if (unseen.length > MAX_INNER_ERRORS) out.aggregateErrorsLeftOut = unseen.length - MAX_INNER_ERRORS;
  }
  if (omitted.length > 0) out.omitted = omitted;
  return out;
}

/**
 * Type, message and stack as pino's serializer writes them (causes folded in), or read one by one
 * when it cannot: it passes an error whose message is not a string through as it is, and throws on
 * a getter that throws or a frozen error.
 */
function headline(error: Error): { type: string; message: string; stack: string } {
  try {
    // pino hands back the error itself when it does not take it for one (a message not a string).
    const standard = stdSerializers.err(error) as unknown as Partial<Record<'type' | 'message' | 'stack', unknown>>;
    if ((standard as unknown) !== error && typeof standard.message === 'string') return { type: asText(standard.type), message: standard.message, stack: asText(standard.stack) };
  } catch {
    // Read below.
  }
  const maker = readField(error, 'constructor');
  return { type: asText(typeof maker === 'function' ? maker.name : readField(error, 'name')) || 'Error', message: asText(readField(error, 'message')), stack: asText(readField(error, 'stack')) };
}

function fieldText(text: string): string {
  return masked(text).slice(0, MAX_FIELD_LENGTH);
}

/**
 * `scheme://user:password@` in a URL quoted anywhere in the error masked, up to the LAST `@` before
 * the path, as URL and the clients read it (`redis://:p@ss-123@host` sends `p@ss-123`), in linear time.
 */
function masked(text: string): string {
  return withoutUrlUserinfo(text, '[masked]');
}

function isErrorList(value: unknown): value is Error[] {
  return Array.isArray(value) && value.length > 0 && value.every(isErrorLike);
}

function isErrorLike(value: unknown): value is Error {
  try {
    return value instanceof Error || (typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string' && typeof (value as { stack?: unknown }).stack === 'string');
  } catch {
    return false;
  }
}
