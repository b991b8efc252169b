export interface InputChange {
  /** Dotted path of the changed field, e.g. `resources.limits.cpu`; empty for the whole input. */
  path: string;
  /** Absent when the field was added. */
  from?: unknown;
  /** Absent when the field was removed. */
  to?: unknown;
}

/**
 * What a human changed, field by field, for the card and for the model. Objects are compared per
 * key; arrays and other values as a whole, since "item 3 changed" reads worse than the new list.
 */
export function diffInputs(original: unknown, edited: unknown, path = ''): InputChange[] {
  if (isPlainObject(original) && isPlainObject(edited)) {
    const keys = [...new Set([...Object.keys(original), ...Object.keys(edited)])];
    return keys.flatMap((key) => {
      const childPath = path === '' ? key : `${path}.${key}`;
      const inOriginal = Object.hasOwn(original, key);
      const inEdited = Object.hasOwn(edited, key);
      if (!inEdited) return [{ path: childPath, from: original[key] }];
      if (!inOriginal) return [{ path: childPath, to: edited[key] }];
      return diffInputs(original[key], edited[key], childPath);
    });
  }
  return sameValue(original, edited) ? [] : [{ path, from: original, to: edited }];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sameValue(left: unknown, right: unknown): boolean {
  return JSON.stringify(left) === JSON.stringify(right);
}

/** `namespace: "prod" → "staging"`, one line per change; values as JSON so types stay visible. */
export function describeChanges(changes: readonly InputChange[]): string[] {
  return changes.map((change) => {
    const name = change.path === '' ? '(input)' : change.path;
    if (!('to' in change)) return `${name}: ${JSON.stringify(change.from)} → (removed)`;
    if (!('from' in change)) return `${name}: (added) → ${JSON.stringify(change.to)}`;
    return `${name}: ${JSON.stringify(change.from)} → ${JSON.stringify(change.to)}`;
  });
}
