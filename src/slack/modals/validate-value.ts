import { isJsonSchemaTime } from '../../tools/json-schema-validator.js';
import { compileSchemaPattern, type SchemaPattern } from '../../tools/schema-pattern.js';
import { truncateText } from '../blocks/limits.js';
import type { TextFormat } from './form-field.js';
import type { NumberRules, TextRules } from './schema-shape.js';

/**
 * The checks Slack cannot make, with messages short enough to show under an input. Loose on
 * formats on purpose: the caller validates the whole value against the schema afterwards; these
 * only catch typos while the modal is still open. A `full-time` is checked as that validator
 * checks it, though: a time it refuses could never get past the form.
 */

const PATTERN_IN_MESSAGE_LENGTH = 80;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/i;
const TIME = /^([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d|60)(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?$/i;
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i;

export function validateText(value: string, rules: TextRules, format: TextFormat): string | undefined {
  // JSON Schema counts characters (code points), not UTF-16 units.
  const length = [...value].length;
  if (rules.minLength !== undefined && length < rules.minLength) {
    return rules.minLength === 1 ? 'Required' : `Must be at least ${rules.minLength} characters`;
  }
  if (rules.maxLength !== undefined && length > rules.maxLength) return `Must be at most ${rules.maxLength} characters`;
  const formatProblem = checkFormat(value, format);
  if (formatProblem !== undefined) return formatProblem;
  if (rules.pattern !== undefined) {
    const pattern = compilePattern(rules.pattern);
    if (pattern !== undefined && !pattern.test(value)) return `Must match ${truncateText(rules.pattern, PATTERN_IN_MESSAGE_LENGTH)}`;
  }
  return undefined;
}

export function validateNumber(value: number, rules: NumberRules): string | undefined {
  if (!Number.isFinite(value)) return 'Must be a number';
  if (rules.integer && !Number.isInteger(value)) return 'Must be a whole number';
  if (rules.minimum !== undefined && value < rules.minimum) return `Must be at least ${rules.minimum}`;
  if (rules.exclusiveMinimum !== undefined && value <= rules.exclusiveMinimum) return `Must be greater than ${rules.exclusiveMinimum}`;
  if (rules.maximum !== undefined && value > rules.maximum) return `Must be at most ${rules.maximum}`;
  if (rules.exclusiveMaximum !== undefined && value >= rules.exclusiveMaximum) return `Must be less than ${rules.exclusiveMaximum}`;
  if (rules.multipleOf !== undefined && !isMultipleOf(value, rules.multipleOf)) return `Must be a multiple of ${rules.multipleOf}`;
  return undefined;
}

export function validateItemCount(count: number, { minItems, maxItems }: { minItems?: number; maxItems?: number }): string | undefined {
  if (minItems !== undefined && count < minItems) return minItems === 1 ? 'Choose at least one' : `Needs at least ${minItems} items`;
  if (maxItems !== undefined && count > maxItems) return `At most ${maxItems} ${maxItems === 1 ? 'item' : 'items'}`;
  return undefined;
}

/** A decimal as typed into a text box; undefined when it is not one. */
export function parseDecimal(text: string): number | undefined {
  const trimmed = text.trim();
  if (!DECIMAL.test(trimmed)) return undefined;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : undefined;
}

/**
 * Slack's number inputs take plain decimals; `String(1e21)` is `"1e+21"`, which they would not.
 * Undefined when the number has no such spelling.
 */
export function decimalString(value: number): string | undefined {
  if (!Number.isFinite(value)) return undefined;
  const text = String(Object.is(value, -0) ? 0 : value);
  return /e/i.test(text) ? undefined : text;
}

/**
 * The schema's pattern, run in linear time (see compileSchemaPattern): the schema and the value
 * both come from outside. Undefined, so the check is skipped, when the pattern is not valid or the
 * linear engine cannot run it (lookahead, backreferences): the approver cannot fix the schema.
 */
export function compilePattern(source: string): SchemaPattern | undefined {
  const compiled = compileSchemaPattern(source);
  return compiled.kind === 'linear' ? compiled.pattern : undefined;
}

export function isCalendarDate(value: string): boolean {
  const match = DATE.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(0);
  // Not Date.UTC, which reads years 0–99 as 1900–1999.
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day && year >= 1;
}

/**
 * The one spelling a `datetimepicker` round-trips: UTC, whole seconds, no milliseconds
 * (`2025-01-16T06:30:00Z`). Undefined for times outside years 0001–9999.
 */
export function formatDateTime(unixSeconds: number): string | undefined {
  if (!Number.isFinite(unixSeconds)) return undefined;
  const date = new Date(unixSeconds * 1000);
  const year = date.getUTCFullYear();
  if (Number.isNaN(date.getTime()) || year < 1 || year > 9999) return undefined;
  return date.toISOString().replace(/\.000Z$/, 'Z');
}

/** Unix seconds for a date-time string already in `formatDateTime`'s spelling, else undefined. */
export function canonicalDateTimeSeconds(value: string): number | undefined {
  const milliseconds = Date.parse(value);
  if (!Number.isFinite(milliseconds) || milliseconds % 1000 !== 0) return undefined;
  const seconds = milliseconds / 1000;
  return formatDateTime(seconds) === value ? seconds : undefined;
}

function checkFormat(value: string, format: TextFormat): string | undefined {
  switch (format) {
    case 'email':
      return EMAIL.test(value) ? undefined : 'Must be an email address';
    case 'url':
      return isUrl(value) ? undefined : 'Must be a URL, e.g. https://example.com';
    case 'date':
      return isCalendarDate(value) ? undefined : 'Must be a date, e.g. 2025-01-16';
    case 'date-time':
      return DATE_TIME.test(value) && Number.isFinite(Date.parse(value)) ? undefined : 'Must be a date and time, e.g. 2025-01-16T06:30:00Z';
    case 'time':
      return TIME.test(value) ? undefined : 'Must be a time, e.g. 06:30 or 06:30:00';
    case 'full-time':
      return isJsonSchemaTime(value) ? undefined : 'Must be a time with seconds and a time zone, e.g. 06:30:00Z or 06:30:00+02:00';
    case 'plain':
      return undefined;
  }
}

export function isUrl(value: string): boolean {
  if (!/^[a-z][a-z0-9+.-]*:\S+$/i.test(value)) return false;
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

export function isEmail(value: string): boolean {
  return EMAIL.test(value);
}

function isMultipleOf(value: number, divisor: number): boolean {
  const quotient = value / divisor;
  // Decimal divisors such as 0.1 never divide exactly in binary floating point.
  return Math.abs(quotient - Math.round(quotient)) < 1e-9 * Math.max(1, Math.abs(quotient));
}
