import type { Presence } from './field-presence.js';
import { isGroup, samePath, type FormField } from './form-field.js';
import { isRecord } from './json-schema.js';

/** What an input shows for a property the model left out, and where that comes from. */
export interface ShownDefault {
  value: unknown;
  /**
   * From the default of an object around it (pydantic's `opts: Opts = Opts(force=True)` writes
   * `default: {force: true, grace: 30}` on `opts`): the server applies it only to the object left
   * out as a whole, so a value shown from it must come back explicitly once another input of the
   * object changes, or the property's own default would replace it.
   */
  fromObject: boolean;
}

/**
 * The default an input shows, given how each level of its path appeared in the value the form was
 * opened with (`presences`, outermost first). The server fills a left-out object with the object's
 * default, and only what that default lacks with the defaults of its properties: so from the
 * outermost level left out, the first object default along the path that holds the property wins,
 * else the property's own default. Undefined when no level was left out (or no default applies).
 */
export function shownDefault({ fields, field, presences }: { fields: readonly FormField[]; field: FormField; presences: readonly Presence[] }): ShownDefault | undefined {
  const path = field.path;
  let level = presences.findIndex((presence) => presence === 'absent' || presence === 'fresh');
  if (level < 0) return undefined;
  while (level < path.length - 1) {
    const objectPath = path.slice(0, level + 1);
    const objectDefault = fields.find((candidate) => isGroup(candidate) && samePath(candidate.path, objectPath))?.defaultValue;
    if (objectDefault === undefined) {
      level += 1;
      continue;
    }
    let value = objectDefault.value;
    let depth = level + 1;
    for (let name = path[depth]; name !== undefined && isRecord(value) && Object.hasOwn(value, name); name = path[depth]) {
      value = value[name];
      depth += 1;
    }
    if (depth === path.length) return { value, fromObject: true };
    // The object's default leaves a level out (its own default applies from there), or holds no object there (nothing below it is sent).
    if (!isRecord(value)) return undefined;
    level = depth;
  }
  return field.defaultValue === undefined ? undefined : { value: field.defaultValue.value, fromObject: false };
}
