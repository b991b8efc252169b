import { readField } from './read-field.js';

/** More strings in a kept list are left out: Slack lists one message per refused block. */
const MAX_KEPT_STRINGS = 10;

/**
 * The nested fields of an error the log keeps, by the field's name on the error: only these, and
 * only as strings, because an operator cannot act without them and they do not hold what was sent.
 * Slack's platform error (`data`): its error code, the messages and warnings that name the refused
 * block (`[ERROR] must be less than 3001 characters [json-pointer:/blocks/2/text/text]`), and the
 * scopes a `missing_scope` needed and had. ioredis's refused command (`command`): its name only,
 * never its `args` (`HELLO 3 AUTH default <password>`).
 */
const KEPT_PATHS: Readonly<Record<string, readonly (readonly string[])[]>> = {
  data: [['error'], ['needed'], ['provided'], ['response_metadata', 'messages'], ['response_metadata', 'warnings']],
  command: [['name']],
};

/**
 * What of a nested error field the log keeps (`KEPT_PATHS`), with each string passed through
 * `text` (masking, length cap), or undefined when nothing is kept and the field is left out.
 */
export function keptErrorDetails(options: { key: string; value: object; text: (value: string) => string }): Record<string, unknown> | undefined {
  const paths = Object.hasOwn(KEPT_PATHS, options.key) ? KEPT_PATHS[options.key] : undefined;
  if (paths === undefined) return undefined;
  let kept: Record<string, unknown> | undefined;
  for (const path of paths) {
    const leaf = keptLeaf(valueAt(options.value, path), options.text);
    if (leaf === undefined) continue;
    kept ??= {};
    let parent = kept;
    for (const step of path.slice(0, -1)) parent = (parent[step] ??= {}) as Record<string, unknown>;
    parent[path.at(-1) as string] = leaf;
  }
  return kept;
}

function valueAt(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const step of path) current = readField(current, step);
  return current;
}

/** A string, or the strings of a list (the first few); anything else is not kept. */
function keptLeaf(value: unknown, text: (value: string) => string): string | string[] | undefined {
  if (typeof value === 'string') return text(value);
  if (!Array.isArray(value)) return undefined;
  const strings = value.filter((each): each is string => typeof each === 'string').slice(0, MAX_KEPT_STRINGS).map(text);
  return strings.length > 0 ? strings : undefined;
}
