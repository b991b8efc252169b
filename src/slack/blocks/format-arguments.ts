import { randomUUID } from 'node:crypto';
import { revealInvisible } from '../format/reveal-invisible.js';
import { truncateText } from './limits.js';

/** Deeper structure is elided: it is unreadable on a card and could overflow the stack. */
export const MAX_DEPTH = 20;
/**
 * Values past this many are elided. Far more than a card shows, and it bounds the work for
 * objects that share references, which would otherwise expand exponentially.
 */
export const MAX_VALUES = 10_000;
/**
 * What stands in the JSON for an elided object or array. Unquoted, so it cannot be mistaken for a
 * string the model wrote (every string in the JSON is quoted), and it names why.
 */
export const ELIDED_TOO_DEEP = '‹not shown: nested too deep›';
export const ELIDED_PAST_LIMIT = `‹not shown: past the first ${MAX_VALUES.toLocaleString('en-US')} values›`;

/**
 * Objects and arrays the display left out, each with everything it holds. The tool receives them,
 * so every view of the input says so (`elisionNote`) rather than passing the marker off as data.
 */
export interface Elisions {
  /** Nested deeper than `MAX_DEPTH` levels. */
  tooDeep: number;
  /** Past the first `MAX_VALUES` objects and arrays. */
  pastLimit: number;
}

export interface DisplayedArguments {
  text: string;
  elided: Elisions;
}

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
  return displayArguments(input).text;
}

/** `stringifyArguments` with a count of what it had to leave out, for the views that must say so. */
export function displayArguments(input: unknown): DisplayedArguments {
  const elided: Elisions = { tooDeep: 0, pastLimit: 0 };
  if (input === undefined) return { text: '(no input)', elided };
  // Elided values are written as this (random, so no model string can spell it) and then unquoted.
  const placeholder = randomUUID();
  try {
    const displayable = toDisplayable(input, [], 0, { remaining: MAX_VALUES, placeholder, elided });
    const text = (JSON.stringify(displayable, null, 2) ?? String(typeof input))
      .replaceAll(`"${placeholder}:deep"`, ELIDED_TOO_DEEP)
      .replaceAll(`"${placeholder}:limit"`, ELIDED_PAST_LIMIT);
    return { text: revealInvisible(text), elided };
  } catch {
    return { text: '(input could not be displayed)', elided: { tooDeep: 0, pastLimit: 0 } };
  }
}

interface DisplayBudget {
  remaining: number;
  placeholder: string;
  elided: Elisions;
}

/** A JSON-safe copy for display. `ancestors` detects true cycles; shared references are fine. */
function toDisplayable(value: unknown, ancestors: object[], depth: number, budget: DisplayBudget): unknown {
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'symbol' || typeof value === 'function') return undefined;
  if (typeof value !== 'object' || value === null) return value;
  if (ancestors.includes(value)) return '[Circular]';
  budget.remaining -= 1;
  if (depth >= MAX_DEPTH) {
    budget.elided.tooDeep += 1;
    return `${budget.placeholder}:deep`;
  }
  if (budget.remaining < 0) {
    budget.elided.pastLimit += 1;
    return `${budget.placeholder}:limit`;
  }
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
