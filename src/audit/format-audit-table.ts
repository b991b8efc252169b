import type { StoredAuditEvent } from './audit-event.js';
import { auditEventTime } from './audit-event-time.js';
import { type AuditEventCells, describeAuditEvent, utcTime } from './describe-audit-event.js';

export interface FormatAuditTableOptions {
  /** Epoch milliseconds, for the AGE column. */
  now: number;
  /** Characters of DETAILS shown before truncating; the JSON output keeps everything. */
  detailsWidth?: number;
}

interface Column {
  header: string;
  /** A cell is cut to this many characters; the column is as wide as its widest cell. */
  maxWidth: number;
}

const COLUMNS = {
  time: { header: 'TIME (UTC)', maxWidth: 19 },
  age: { header: 'AGE', maxWidth: 6 },
  type: { header: 'TYPE', maxWidth: 20 },
  tool: { header: 'TOOL', maxWidth: 24 },
  who: { header: 'WHO', maxWidth: 12 },
  // 11: room for `interrupted` (a call whose process stopped while it ran).
  result: { header: 'RESULT', maxWidth: 11 },
} satisfies Record<string, Column>;

const DEFAULT_DETAILS_WIDTH = 100;

/** A fixed-width table for people at a terminal, oldest first, as the events are given. */
export function formatAuditTable(events: readonly StoredAuditEvent[], options: FormatAuditTableOptions): string {
  return [...auditTableLines(events, options)].join('');
}

/**
 * The table line by line, each ending in a newline, for writing without building one string of
 * the whole window. The column widths need every row first; a row holds only cut-short cells.
 */
export function* auditTableLines(events: readonly StoredAuditEvent[], { now, detailsWidth = DEFAULT_DETAILS_WIDTH }: FormatAuditTableOptions): Generator<string> {
  if (events.length === 0) {
    yield 'No audit events.\n';
    return;
  }
  const rows = events.map((event) => {
    const row = tableRow(event, now);
    // Cut now, not when printed: details can hold a whole tool input, and every row is kept until then.
    return { ...row, details: truncate(clean(row.details), detailsWidth) };
  });
  const columns = Object.entries(COLUMNS) as Array<[keyof typeof COLUMNS, Column]>;
  // A reduce, not Math.max(...rows): spread, a long window's rows are more arguments than a call takes.
  const widths = columns.map(([name, column]) =>
    rows.reduce((widest, row) => Math.max(widest, Math.min(column.maxWidth, length(clean(row[name])))), column.header.length),
  );
  const line = (cells: string[], details: string) =>
    `${[...cells.map((cell, index) => pad(truncate(clean(cell), widths[index] ?? 0), widths[index] ?? 0)), details].join('  ').trimEnd()}\n`;
  yield line(
    columns.map(([, column]) => column.header),
    truncate('DETAILS', detailsWidth),
  );
  for (const row of rows) yield line(columns.map(([name]) => row[name]), row.details);
}

/**
 * One event's cells. The trail can hold entries this version did not write (by hand, by an older or
 * newer bot): one without a usable `at` is shown at its entry's time and says so, and one whose
 * fields do not fit its type shows its JSON, rather than one entry taking the whole table down.
 */
function tableRow(event: StoredAuditEvent, now: number): Record<keyof typeof COLUMNS | 'details', string> {
  const { ms, fromId } = auditEventTime(event);
  let cells: AuditEventCells;
  try {
    cells = describeAuditEvent(event);
  } catch {
    cells = { tool: NOBODY, who: NOBODY, result: NOBODY, details: JSON.stringify(event) };
  }
  const details = text(cells.details);
  return {
    time: ms === undefined ? '?' : utcTime(ms),
    age: ms === undefined ? '?' : age(now - ms),
    type: text(event.type),
    tool: text(cells.tool),
    who: text(cells.who),
    result: text(cells.result),
    details: fromId ? `(no event time: the entry's) ${details}` : details,
  };
}

const NOBODY = '-';

/** A cell from a field that may be missing or not a string in a damaged entry. */
function text(value: unknown): string {
  if (typeof value === 'string') return value;
  return value === undefined ? NOBODY : (JSON.stringify(value) ?? String(value));
}

/**
 * Shown as `\uXXXX`: bidirectional controls reorder text on screen, U+2028/U+2029 break lines in
 * some viewers.
 */
const REORDERING = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;
/** DEL and the C1 controls, which JSON.stringify (escaping only U+0000-U+001F) leaves raw: U+009B is CSI, U+009D OSC. */
const UNESCAPED_CONTROLS = /[\u007f-\u009f]/g;

/**
 * One JSON object per line, for a SIEM or `jq`. Each line is a complete event, ids included. It is
 * read at a terminal too, so no control character a user, model or tool wrote reaches it raw: the
 * ones JSON.stringify leaves are escaped as well, which any JSON reader turns back into the same text
 * (outside strings JSON has only ASCII, so every match is inside one).
 */
export function formatAuditJsonLines(events: readonly StoredAuditEvent[]): string {
  return [...auditJsonLines(events)].join('');
}

/** The JSON lines one by one, for writing without building one string of the whole window. */
export function* auditJsonLines(events: readonly StoredAuditEvent[]): Generator<string> {
  for (const event of events) yield `${JSON.stringify(event).replace(UNESCAPED_CONTROLS, unicodeEscape).replace(REORDERING, unicodeEscape)}\n`;
}

/**
 * Inputs, reasons and error messages come from models, users and tools. Control characters would
 * break the table or, as terminal escapes, rewrite what the reviewer sees. Bidirectional controls
 * would reorder the text on screen (a reason that reads "approved" while its characters say
 * otherwise), so they are shown as escapes, and so are the line and paragraph separators.
 */
function clean(text: string): string {
  return text
    .replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ')
    .replace(REORDERING, unicodeEscape);
}

function unicodeEscape(character: string): string {
  return `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** Counted in code points, so an emoji is not cut in half. */
function length(text: string): number {
  return [...text].length;
}

function truncate(text: string, width: number): string {
  const characters = [...text];
  return characters.length <= width ? text : `${characters.slice(0, Math.max(0, width - 1)).join('')}…`;
}

function pad(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - length(text)));
}

function age(milliseconds: number): string {
  const seconds = Math.max(0, Math.floor(milliseconds / 1_000));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3_600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3_600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}
