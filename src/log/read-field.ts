/** What the log writes for a field whose getter threw (or a value that cannot be turned into text). */
export const UNREADABLE = '[unreadable]';

/**
 * A field of a value the log is writing, or `UNREADABLE` when its getter throws: a log call runs
 * in a catch block, where a throw would replace the error being reported.
 */
export function readField(target: unknown, key: string): unknown {
  if (typeof target !== 'object' || target === null) return undefined;
  try {
    return (target as Record<string, unknown>)[key];
  } catch {
    return UNREADABLE;
  }
}

/** A value as text: a string as it is, nothing as '', anything else through String(). */
export function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  try {
    return String(value);
  } catch {
    return UNREADABLE;
  }
}
