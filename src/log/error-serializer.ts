import { stdSerializers } from 'pino';

/** Longer string fields are cut: a reply body can be a whole HTML error page. */
const MAX_FIELD_LENGTH = 1_000;
/** `scheme://user:password@` in a URL quoted anywhere in the error. */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@]*@/gi;

/**
 * How an error is written to the log (`err` and `error`): its type, message and stack (a cause's
 * folded in, as pino does), its own scalar fields, and its nested errors told the same way. Any
 * other field is named in `omitted` and left out: libraries hang what they sent on their errors,
 * and what they sent holds credentials. ioredis puts the refused command on the error
 * (`command.args`: `HELLO 3 AUTH default <password>` when Redis refuses the password), an HTTP
 * client its request and config (`Authorization` headers), the AI SDK the whole prompt
 * (`requestBodyValues`). Redact paths cannot follow these: they are nested at any depth, under any
 * name. Credentials in a quoted URL are masked too.
 */
export function serializeError(value: unknown): unknown {
  return isErrorLike(value) ? described(value, new Set()) : value;
}

function described(error: Error, seen: Set<object>): Record<string, unknown> {
  seen.add(error);
  const standard = stdSerializers.err(error) as { type: string; message: string; stack?: string };
  const out: Record<string, unknown> = { type: standard.type, message: masked(standard.message), stack: masked(standard.stack ?? '') };
  const omitted: string[] = [];
  // Own and inherited enumerable fields, as pino's own serializer reads them.
  for (const key in error) {
    if (key === 'cause' || key in out) continue;
    const field = (error as unknown as Record<string, unknown>)[key];
    if (field === undefined || typeof field === 'function') continue;
    if (field === null || typeof field === 'number' || typeof field === 'boolean') out[key] = field;
    else if (typeof field === 'string') out[key] = masked(field).slice(0, MAX_FIELD_LENGTH);
    else if (isErrorLike(field)) {
      if (!seen.has(field)) out[key] = described(field, seen);
    } else if (key === 'errors' && Array.isArray(field) && field.every(isErrorLike)) {
      out.aggregateErrors = field.filter((each) => !seen.has(each)).map((each) => described(each, seen));
    } else omitted.push(key);
  }
  if (omitted.length > 0) out.omitted = omitted;
  return out;
}

function masked(text: string): string {
  return text.replace(URL_CREDENTIALS, '$1[masked]@');
}

function isErrorLike(value: unknown): value is Error {
  return value instanceof Error || (typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string' && typeof (value as { stack?: unknown }).stack === 'string');
}
