import { isRecord } from './json-schema.js';

/**
 * How a property appeared in the value the form was opened with. A cleared input means different
 * things depending on it (see `parse-field-state.ts`), so it travels with the input's
 * `action_id`: the submit handler then needs only the schema, never the original value.
 *
 * - `absent`: the object had no such key (the model left it out).
 * - `null`: the key held `null`.
 * - `empty`: `""`, `false`, `[]` or `{}`: a cleared input gives that value back.
 * - `set`: any other value.
 * - `fresh`: the form was opened without a value at all (`ask_user`).
 */
export type Presence = 'absent' | 'null' | 'empty' | 'set' | 'fresh';

/**
 * How the input holds the value: `widget` is the natural Slack element; `text` a plain text input
 * standing in for a picker or menu the value did not fit; `json` JSON text; `seconds` a timepicker
 * whose `HH:mm` gets `:00` appended; `utc` a timepicker in UTC whose `HH:mm` gets `:00Z`.
 */
export type Variant = 'widget' | 'text' | 'json' | 'seconds' | 'utc';

const PRESENCE_CODES: Record<Presence, string> = { absent: 'a', null: 'n', empty: 'e', set: 's', fresh: 'f' };
const VARIANT_CODES: Record<Variant, string> = { widget: 'w', text: 't', json: 'j', seconds: 's', utc: 'u' };

/**
 * `w.sa`: variant, then one presence per level from the top-level property down to the field.
 * At most four levels deep, so always far below the 255-character limit.
 */
export function encodeActionId({ variant, presences }: { variant: Variant; presences: readonly Presence[] }): string {
  return `${VARIANT_CODES[variant]}.${presences.map((presence) => PRESENCE_CODES[presence]).join('')}`;
}

/** Unknown or foreign action ids read as a plain widget whose value was set. */
export function decodeActionId(actionId: string): { variant: Variant; presences: Presence[] } {
  const [variantCode = '', presenceCodes = ''] = actionId.split('.');
  const variant = (Object.keys(VARIANT_CODES) as Variant[]).find((key) => VARIANT_CODES[key] === variantCode) ?? 'widget';
  const presences = [...presenceCodes].map(
    (code) => (Object.keys(PRESENCE_CODES) as Presence[]).find((key) => PRESENCE_CODES[key] === code) ?? 'set',
  );
  return { variant, presences };
}

export function presenceOf(value: unknown, { present }: { present: boolean }): Presence {
  if (!present) return 'absent';
  if (value === null) return 'null';
  if (value === '' || value === false) return 'empty';
  if (Array.isArray(value)) return value.length === 0 ? 'empty' : 'set';
  if (isRecord(value)) return Object.keys(value).length === 0 ? 'empty' : 'set';
  return 'set';
}

/** The presence of every level of `path` in `initialValue`, outermost first. */
export function presencesAlong({ initialValue, path }: { initialValue: unknown; path: readonly string[] }): Presence[] {
  if (initialValue === undefined) return path.length === 0 ? ['fresh'] : path.map(() => 'fresh');
  if (path.length === 0) return [presenceOf(initialValue, { present: true })];
  const presences: Presence[] = [];
  let container: unknown = initialValue;
  for (const name of path) {
    const present = isRecord(container) && Object.hasOwn(container, name);
    const value = present ? (container as Record<string, unknown>)[name] : undefined;
    presences.push(presenceOf(value, { present }));
    container = value;
  }
  return presences;
}

/** The value at `path`, wrapped so that a present `undefined`-free lookup differs from a missing key. */
export function valueAt(initialValue: unknown, path: readonly string[]): { value: unknown } | undefined {
  let container: unknown = initialValue;
  for (const name of path) {
    if (!isRecord(container) || !Object.hasOwn(container, name)) return undefined;
    container = container[name];
  }
  return container === undefined ? undefined : { value: container };
}
