import { describeChanges, type InputChange } from '../approvals/input-diff.js';
import { REDACTED, SECRET_KEY_PATTERN, redactSecrets } from './redact-secrets.js';

const ARROW = ' → ';
const ADDED = '(added)';
const REMOVED = '(removed)';
/**
 * A key or value may itself hold ": " or " → ", so a line can be split several ways; only one gives
 * two JSON values. The cap keeps a hostile line from costing quadratic parsing.
 */
const MAX_SPLITS_TRIED = 64;

/**
 * A change line of an edit (`password: "hunter2" → "S3cret"`, as describeChanges writes it) with
 * secrets hidden as they are in the inputs beside it: a field with a secret-looking name still shows
 * that it changed, not its values, and a changed object has its secret-looking keys redacted. A line
 * that names nothing secret-looking is kept as it is; one that does but cannot be read is hidden whole.
 */
export function redactChangeLine(line: string): string {
  // A secret-looking key, in the path or inside a JSON value, is written out as it is, so a line
  // where the pattern finds nothing holds none.
  if (!SECRET_KEY_PATTERN.test(line)) return line;
  const change = parseChangeLine(line);
  if (!change) return `${REDACTED} (a change to a secret-looking field)`;
  // The pattern cannot match across the dot between two keys, so the whole path matches exactly
  // when one of its keys does.
  const secretPath = SECRET_KEY_PATTERN.test(change.path);
  const hide = (value: unknown) => (secretPath ? REDACTED : redactSecrets(value));
  return describeChanges([
    {
      path: change.path,
      ...('from' in change && { from: hide(change.from) }),
      ...('to' in change && { to: hide(change.to) }),
    },
  ])[0]!;
}

/** The change a line describes, or undefined when no split of it gives `path: value → value`. */
function parseChangeLine(line: string): InputChange | undefined {
  let tried = 0;
  for (const nameEnd of indexesOf(line, ': ')) {
    const name = line.slice(0, nameEnd);
    const values = line.slice(nameEnd + 2);
    for (const arrowAt of indexesOf(values, ARROW)) {
      if (++tried > MAX_SPLITS_TRIED) return undefined;
      const from = sideOf(values.slice(0, arrowAt), ADDED);
      const to = sideOf(values.slice(arrowAt + ARROW.length), REMOVED);
      // describeChanges never writes a field that is neither before nor after.
      if (from && to && ('value' in from || 'value' in to)) {
        return { path: name === '(input)' ? '' : name, ...('value' in from && { from: from.value }), ...('value' in to && { to: to.value }) };
      }
    }
  }
  return undefined;
}

/** One side of the arrow: a JSON value, or the word for a field that is not there (no `value`). */
function sideOf(text: string, absent: string): { value?: unknown } | undefined {
  if (text === absent) return {};
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

function* indexesOf(text: string, search: string): Generator<number> {
  for (let at = text.indexOf(search); at !== -1; at = text.indexOf(search, at + 1)) yield at;
}
