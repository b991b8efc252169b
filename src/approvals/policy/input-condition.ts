import { CONDITION_REGEX_FLAGS, type ConditionValue, type PolicyCondition } from '../../config/policy-config-schema.js';

/**
 * Conditions say when a call needs approval, so a condition that wrongly comes out false lets a
 * risky call run unasked. Where the input is ambiguous the evaluation therefore leans to "met":
 * - text and numbers compare by value (`equals: 8080` matches `"8080"`);
 * - a list matches when any element does, and a path runs through lists (`containers.image`
 *   reads every container's image);
 * - a value the test cannot read (an object, null, or non-numeric text for `greaterThan`)
 *   counts as met, so a human looks at it.
 * Only a field that is absent never matches: pass the input after the tool's schema has applied
 * its defaults, or a defaulted `namespace: prod` is invisible here.
 */
export type InputTest = (input: unknown) => boolean;

export function compileCondition(condition: PolicyCondition): InputTest {
  const path = condition.field.split('.');
  const test = compileValueTest(condition);
  return (input) => {
    const values = readField(input, path);
    return values.some((value) => valueMeets(value, test));
  };
}

/** Every value at `path`, fanning out through lists; empty when the field is absent. */
export function readField(input: unknown, path: readonly string[]): unknown[] {
  let values: unknown[] = [input];
  for (const segment of path) values = values.flatMap((value) => step(value, segment));
  return values.filter((value) => value !== undefined);
}

function step(value: unknown, segment: string): unknown[] {
  if (Array.isArray(value)) {
    if (/^\d+$/.test(segment)) return Number(segment) < value.length ? [value[Number(segment)]] : [];
    return value.flatMap((element) => step(element, segment));
  }
  // Own keys only: `constructor` or `__proto__` in a path must not reach Object.prototype.
  if (typeof value === 'object' && value !== null && Object.hasOwn(value, segment)) return [(value as Record<string, unknown>)[segment]];
  return [];
}

type ReadableValue = string | number | boolean;
/** undefined: this value cannot be compared, which counts as met. */
type ValueTest = (value: ReadableValue) => boolean | undefined;

function valueMeets(value: unknown, test: ValueTest): boolean {
  if (Array.isArray(value)) return value.some((element) => valueMeets(element, test));
  if (typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) {
    return test(value) ?? true;
  }
  return true;
}

function compileValueTest(condition: PolicyCondition): ValueTest {
  switch (condition.operator) {
    case 'equals':
      return (value) => sameValue(value, condition.value);
    case 'oneOf':
      return (value) => condition.values.some((expected) => sameValue(value, expected));
    case 'matches': {
      const expression = new RegExp(condition.pattern, CONDITION_REGEX_FLAGS);
      return (value) => expression.test(String(value));
    }
    case 'greaterThan':
      return numeric((number) => number > condition.value);
    case 'greaterThanOrEqual':
      return numeric((number) => number >= condition.value);
    case 'lessThan':
      return numeric((number) => number < condition.value);
    case 'lessThanOrEqual':
      return numeric((number) => number <= condition.value);
  }
}

function sameValue(value: ReadableValue, expected: ConditionValue): boolean {
  if (typeof expected === 'number') {
    const number = toNumber(value);
    if (number !== undefined) return number === expected;
  }
  return String(value) === String(expected);
}

function numeric(compare: (number: number) => boolean): ValueTest {
  return (value) => {
    const number = toNumber(value);
    return number === undefined ? undefined : compare(number);
  };
}

function toNumber(value: ReadableValue): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const number = Number(value);
  return Number.isFinite(number) ? number : undefined;
}
