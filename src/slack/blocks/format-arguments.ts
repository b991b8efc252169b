import { truncateText } from './limits.js';

/** Deeper structure is elided: it is unreadable on a card and could overflow the stack. */
const MAX_DEPTH = 20;
/**
 * Values past this many are elided. Far more than a card shows, and it bounds the work for
 * objects that share references, which would otherwise expand exponentially.
 */
const MAX_VALUES = 10_000;
/**
 * Invisible or reordering characters (bidi overrides, zero-width marks). Shown as `\uXXXX` so
 * an approver sees the input the tool will get, not a string rearranged to look harmless.
 */
const INVISIBLE_CHARACTERS = /[\u00AD\u061C\u180E\u200B-\u200F\u2028-\u202E\u2060-\u206F\uFEFF]/g;

export interface FormattedArguments {
  text: string;
  truncated: boolean;
  /** Characters of `stringifyArguments(input)` left out; 0 when nothing was cut. */
  omittedCharacters: number;
}

/**
 * A tool call's input as readable, indented JSON, cut to `maxLength` with an ellipsis. Plain text:
 * escape it before putting it in mrkdwn. Accepts anything, including values JSON cannot hold.
 */
export function formatArguments(input: unknown, maxLength: number): FormattedArguments {
  const full = stringifyArguments(input);
  const text = truncateText(full, maxLength);
  const truncated = text !== full;
  return { text, truncated, omittedCharacters: truncated ? full.length - text.length + 1 : 0 };
}

/**
 * The whole input as pretty JSON. Never throws: cycles, getters that throw, BigInts, Maps and
 * over-deep nesting all become readable placeholders.
 */
export function stringifyArguments(input: unknown): string {
  if (input === undefined) return '(no input)';
  try {
    const text = JSON.stringify(toDisplayable(input, [], 0, { remaining: MAX_VALUES }), null, 2) ?? String(typeof input);
    return text.replace(INVISIBLE_CHARACTERS, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
  } catch {
    return '(input could not be displayed)';
  }
}

/** A JSON-safe copy for display. `ancestors` detects true cycles; shared references are fine. */
function toDisplayable(value: unknown, ancestors: object[], depth: number, budget: { remaining: number }): unknown {
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'symbol' || typeof value === 'function') return undefined;
  if (typeof value !== 'object' || value === null) return value;
  if (ancestors.includes(value)) return '[Circular]';
  budget.remaining -= 1;
  if (depth >= MAX_DEPTH || budget.remaining < 0) return Array.isArray(value) ? '[…]' : '{…}';
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
  if (value instanceof Number || value instanceof String || value instanceof Boolean) return toDisplayable(value.valueOf(), ancestors, depth, budget);
  const nested = [...ancestors, value];
  const child = (item: unknown): unknown => toDisplayable(item, nested, depth + 1, budget);
  if (value instanceof Map) return Array.from(value, child);
  if (Array.isArray(value) || value instanceof Set || (ArrayBuffer.isView(value) && !(value instanceof DataView))) {
    return Array.from(value as Iterable<unknown>, child);
  }
  // Null prototype: a `__proto__` key from JSON.parse stays a plain key instead of a prototype.
  const copy: Record<string, unknown> = Object.create(null);
  for (const [key, item] of Object.entries(value)) copy[key] = child(item);
  return copy;
}
