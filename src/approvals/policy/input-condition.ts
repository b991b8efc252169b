import type { ConditionValue, PolicyCondition } from '../../config/policy-config-schema.js';
import { compileExactPattern } from '../../tools/exact-pattern.js';

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

/**
 * The same test, telling a sure answer from a lean: `unclear` when only some elements of a list
 * meet it, some branches of a path through a list are absent, or a value cannot be read. Leaning to
 * "met" is the safe side for `approval.when` and for a stricter `input:` rule, but not for whether
 * a laxer `input:` rule applies; rule selection needs to know which answers were leans.
 */
export type ConditionOutcome = 'met' | 'unmet' | 'unclear';
export type InputCondition = (input: unknown) => ConditionOutcome;

export function compileCondition(condition: PolicyCondition): InputTest {
  const outcomeOf = compileConditionOutcome(condition);
  return (input) => outcomeOf(input) !== 'unmet';
}

export function compileConditionOutcome(condition: PolicyCondition): InputCondition {
  const path = condition.field.split('.');
  const test = compileValueTest(condition);
  return (input) => {
    const { values, someAbsent } = readFieldBranches(input, path);
    const outcome = combineOutcomes(values.map((value) => valueOutcome(value, test)));
    // A list element without the field may still be what the tool acts on: not a sure match.
    return outcome === 'met' && someAbsent ? 'unclear' : outcome;
  };
}

/** Every outcome met: met; every one unmet (or none at all): unmet; else unclear. */
export function combineOutcomes(outcomes: readonly ConditionOutcome[]): ConditionOutcome {
  if (outcomes.length > 0 && outcomes.every((outcome) => outcome === 'met')) return 'met';
  if (outcomes.every((outcome) => outcome === 'unmet')) return 'unmet';
  return 'unclear';
}

/** Every value at `path`, fanning out through lists; empty when the field is absent. */
export function readField(input: unknown, path: readonly string[]): unknown[] {
  return readFieldBranches(input, path).values;
}

interface Branches {
  values: unknown[];
  /** Whether the path ended early on some branch (a list element without the field). */
  someAbsent: boolean;
}

function readFieldBranches(input: unknown, path: readonly string[]): Branches {
  let branches: Branches = { values: [input], someAbsent: false };
  for (const segment of path) {
    const next = branches.values.map((value) => step(value, segment));
    branches = { values: next.flatMap((branch) => branch.values), someAbsent: branches.someAbsent || next.some((branch) => branch.someAbsent) };
  }
  return branches;
}

const ABSENT: Branches = { values: [], someAbsent: true };

function step(value: unknown, segment: string): Branches {
  if (Array.isArray(value)) {
    if (/^\d+$/.test(segment)) return Number(segment) < value.length ? present(value[Number(segment)]) : ABSENT;
    const elements = value.map((element) => step(element, segment));
    return { values: elements.flatMap((element) => element.values), someAbsent: elements.some((element) => element.someAbsent) };
  }
  // Own keys only: `constructor` or `__proto__` in a path must not reach Object.prototype.
  if (typeof value === 'object' && value !== null && Object.hasOwn(value, segment)) return present((value as Record<string, unknown>)[segment]);
  return ABSENT;
}

function present(value: unknown): Branches {
  return value === undefined ? ABSENT : { values: [value], someAbsent: false };
}

type ReadableValue = string | number | boolean;
/** undefined: this value cannot be compared, which is unclear. */
type ValueTest = (value: ReadableValue) => boolean | undefined;

function valueOutcome(value: unknown, test: ValueTest): ConditionOutcome {
  if (Array.isArray(value)) return combineOutcomes(value.map((element) => valueOutcome(element, test)));
  if (typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) {
    const result = test(value);
    if (result === undefined) return 'unclear';
    return result ? 'met' : 'unmet';
  }
  return 'unclear';
}

function compileValueTest(condition: PolicyCondition): ValueTest {
  switch (condition.operator) {
    case 'equals':
      return (value) => sameValue(value, condition.value);
    case 'oneOf':
      return (value) => condition.values.some((expected) => sameValue(value, expected));
    case 'matches': {
      // Linear time on the model's text; the loader refuses a pattern that cannot run so, and one
      // that reaches here anyway is unclear for every value.
      const compiled = compileExactPattern(condition.pattern);
      if (compiled.kind === 'refused') return () => undefined;
      return (value) => compiled.pattern.test(String(value));
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
