import { isGroup, isDirectChild, samePath, type FormField } from './form-field.js';
import { decodeActionId, presencesAlong, valueAt, type Presence } from './field-presence.js';
import { groupAsJsonField, isBelowGroup, showsGroupAsJson } from './group-as-json.js';
import { isRecord } from './json-schema.js';
import { clearedField, parseFieldState, type FieldOutcome, type FieldResult, type SlackStateValue } from './parse-field-state.js';
import { shownDefault } from './shown-default.js';

/** The original values of the properties a rest field holds; undefined when it had none of them. */
export function restValue(field: FormField, initialValue: unknown): { value: Record<string, unknown> } | undefined {
  if (field.control.kind !== 'rest') return undefined;
  const present = field.control.properties.flatMap(({ name }) => {
    const found = valueAt(initialValue, [...field.path, name]);
    return found === undefined ? [] : [[name, found.value] as const];
  });
  return present.length === 0 ? undefined : { value: objectFrom(present) };
}

interface NodeResult extends FieldResult {
  /** Keyed by input block id; dropped with the object when an untouched optional object is left out. */
  errors: Record<string, string>;
}

/** Walks the fields as a tree: objects are assembled from their children, bottom up. */
export class FormReader {
  constructor(
    private readonly fields: readonly FormField[],
    private readonly stateValues: Readonly<Record<string, Readonly<Record<string, SlackStateValue>>>>,
    private readonly initialValue: unknown,
  ) {}

  read(field: FormField): NodeResult {
    return isGroup(field) ? this.group(field) : this.leaf(field);
  }

  private leaf(field: FormField): NodeResult {
    const entry = this.stateEntry(field);
    let result: FieldResult;
    if (entry !== undefined) {
      const shown = shownDefault({ fields: this.fields, field, presences: decodeActionId(entry.actionId).presences });
      result = parseFieldState({ field, actionId: entry.actionId, state: entry.state, shown });
    } else {
      // Not an input in the view: its value could not be shown, so it is kept from the original.
      const kept = field.control.kind === 'rest' ? (restValue(field, this.initialValue) ?? { value: {} }) : valueAt(this.initialValue, field.path);
      const presences = presencesAlong({ initialValue: this.initialValue, path: field.path });
      const shown = shownDefault({ fields: this.fields, field, presences });
      if (kept !== undefined) result = { blank: false, outcome: { kind: 'value', value: kept.value } };
      // An object's default it could not show is kept too, should the object be kept (see shownDefault).
      else if (shown?.fromObject) result = { blank: true, outcome: { kind: 'value', value: shown.value } };
      else result = clearedField(field, presences.at(-1) ?? 'absent');
    }
    return { ...result, errors: result.outcome.kind === 'error' ? { [field.blockId]: result.outcome.message } : {} };
  }

  private group(group: FormField): NodeResult {
    if (this.readsAsJson(group)) return this.leaf(groupAsJsonField(group));
    const children = this.fields.filter((field) =>
      field.control.kind === 'rest' ? samePath(field.path, group.path) : isDirectChild(group.path, field.path),
    );
    const results = children.map((child) => ({ child, result: this.read(child) }));
    const presences = this.groupPresences(group);
    const presence = presences.at(-1) ?? 'absent';
    const kept = this.keptExtraProperties(group);
    // Properties no input shows are still the object's content: with them, blank inputs do not empty it.
    const allBlank = kept.length === 0 && results.every(({ result }) => result.blank);
    const blank = allBlank && (presence === 'absent' || presence === 'fresh' || presence === 'set');
    // Shown from the default of an object around it: assembled as shown, should that object be kept.
    const shown = group.path.length > 0 ? shownDefault({ fields: this.fields, field: group, presences }) : undefined;
    if (allBlank && shown?.fromObject === true && !isRecord(shown.value)) return { blank, outcome: { kind: 'value', value: shown.value }, errors: {} };
    // Cleared on screen: every input gives nothing, and either the approver emptied one of them or, untouched, the
    // object may be left out as a whole (blank). Untouched, an object the model sent as `{}` or `null` is content, not
    // cleared, at any depth: else the object around it would be dropped or made null, and an untouched submit (or an
    // edit elsewhere) would run an input other than the one the approver saw.
    const cleared = kept.length === 0 && results.every(({ result }) => result.cleared === true) && (blank || !allBlank);
    if (allBlank && shown?.fromObject !== true) {
      const collapsed = collapse(group, presence);
      if (collapsed !== undefined) return { blank, cleared, outcome: collapsed, errors: {} };
    }
    // Cleared on screen by the approver: left out or `null` as a whole only where no default of its own brings back what was removed.
    if (cleared && !allBlank && shown?.fromObject !== true) {
      const collapsed = collapse(group, presence);
      const undone = collapsed?.kind === 'omit' && group.defaultValue !== undefined;
      if (collapsed !== undefined && !undone) return { blank: false, cleared, outcome: collapsed, errors: {} };
    }
    const entries: (readonly [string, unknown])[] = [];
    const errors: Record<string, string> = {};
    for (const { child, result } of results) {
      Object.assign(errors, result.errors);
      const outcome = result.outcome;
      if (outcome.kind !== 'value') continue;
      if (child.control.kind === 'rest' && isRecord(outcome.value)) entries.push(...Object.entries(outcome.value));
      else if (child.path.length > 0) entries.push([child.path.at(-1) ?? '', outcome.value]);
    }
    entries.push(...kept);
    return { blank, cleared, outcome: { kind: 'value', value: objectFrom(entries) }, errors };
  }

  /**
   * Shown as one JSON input (its block holds an answer), or kept unchanged because that input did
   * not fit; a form from before such groups were shown so still has answers in the group's inputs.
   */
  private readsAsJson(group: FormField): boolean {
    if (group.path.length === 0) return false;
    if (this.stateEntry(group) !== undefined) return true;
    return showsGroupAsJson(group, this.initialValue) && !this.fields.some((field) => isBelowGroup(group, field) && this.stateEntry(field) !== undefined);
  }

  private stateEntry(field: FormField): { actionId: string; state: SlackStateValue } | undefined {
    const actions = Object.hasOwn(this.stateValues, field.blockId) ? this.stateValues[field.blockId] : undefined;
    const first = actions === undefined ? undefined : Object.entries(actions)[0];
    return first === undefined ? undefined : { actionId: first[0], state: first[1] };
  }

  /** Each level down to the group, from any input below it (its action id carries every level), else from the original value. */
  private groupPresences(group: FormField): Presence[] {
    const depth = group.path.length;
    // Action ids carry the levels below the form, not the form itself.
    if (depth === 0) return [presencesAlong({ initialValue: this.initialValue, path: [] })[0] ?? 'fresh'];
    for (const field of this.fields) {
      if (field.path.length <= depth || !group.path.every((name, index) => field.path[index] === name)) continue;
      const entry = this.stateEntry(field);
      const presences = entry === undefined ? [] : decodeActionId(entry.actionId).presences.slice(0, depth);
      if (presences.length === depth) return presences;
    }
    return presencesAlong({ initialValue: this.initialValue, path: group.path });
  }

  /** Properties the schema does not list but allows: no input shows them, so they stay as they were. */
  private keptExtraProperties(group: FormField): (readonly [string, unknown])[] {
    if (group.control.kind !== 'group' || group.control.extraProperties === 'forbidden') return [];
    const original = valueAt(this.initialValue, group.path)?.value;
    if (!isRecord(original)) return [];
    const known = new Set(group.control.propertyNames);
    return Object.entries(original).filter(([name]) => !known.has(name));
  }
}

/**
 * An object whose inputs were all left blank: how its original presence decides between leaving
 * it out, `null` and `{}` (undefined: assemble it, reporting its missing required fields).
 */
function collapse(group: FormField, presence: Presence): FieldOutcome | undefined {
  switch (presence) {
    case 'null':
      return group.nullable ? { kind: 'value', value: null } : undefined;
    case 'set':
      if (group.nullable) return { kind: 'value', value: null };
      return group.required ? undefined : { kind: 'omit' };
    case 'absent':
    case 'fresh':
      if (!group.required) return { kind: 'omit' };
      return group.nullable ? { kind: 'value', value: null } : undefined;
    case 'empty':
      return undefined;
  }
}

/** Own properties only: a `__proto__` key from JSON stays a key instead of becoming a prototype. */
export function objectFrom(entries: readonly (readonly [string, unknown])[]): Record<string, unknown> {
  const target: Record<string, unknown> = {};
  for (const [key, item] of entries) Object.defineProperty(target, key, { value: item, enumerable: true, writable: true, configurable: true });
  return target;
}
