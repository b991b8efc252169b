import { compileConditionOutcome } from '../approvals/policy/input-condition.js';
import { placeholdersStartingElement } from '../tools/command/argv-template.js';
import { parameterToZodSchema } from '../tools/command/parameters-schema.js';
import type { CommandToolConfig, ConditionValue, CountersignConfig, ParameterConfig, PolicyCondition } from './config-schema.js';
import type { TemplateProblem } from './command-template-check.js';
import { HTTP_REQUEST_METHODS, HTTP_REQUEST_TOOL_NAME } from './http-config-schema.js';

/**
 * A condition the field can never meet is as silent as one on a field the tool lacks (see
 * condition-field-check.ts): `equals: yes` on a boolean (YAML 1.2 reads `yes` as text, which `true`
 * never equals), `production` for an enum of `staging, prod`, or `namespace.name` when `namespace`
 * is plain text each let the risky call run with no card or under a laxer rule. Where the config
 * knows what a field may hold (a command tool's parameter, the fields of `http_request`), every
 * operator is tried on the values it may hold, through the evaluator itself (input-condition.ts) so
 * the check cannot drift from what runs; where it cannot tell (free text with `matches`, MCP and
 * custom tools, globs), it says nothing. Rules are checked under the same terms as the field check.
 */
export function checkConditionValues(config: CountersignConfig): TemplateProblem[] {
  const fieldsByTool = new Map<string, ReadonlyMap<string, FieldShape>>();
  for (const tool of config.tools) {
    const fields = commandToolFields(tool);
    if (fields !== undefined) fieldsByTool.set(tool.name, fields);
  }
  if (config.http !== undefined) fieldsByTool.set(HTTP_REQUEST_TOOL_NAME, HTTP_REQUEST_FIELDS);
  const problems: TemplateProblem[] = [];

  config.policy.rules.forEach((rule, ruleIndex) => {
    const known = rule.tools.flatMap((name) => {
      const fields = fieldsByTool.get(name);
      return fields === undefined ? [] : [{ name, fields }];
    });
    if (known.length === 0 || known.length !== rule.tools.length) return;
    const check = (conditions: readonly PolicyCondition[], at: (string | number)[]) => {
      conditions.forEach((condition, index) => {
        const path = ['policy', 'rules', ruleIndex, ...at, index];
        const byTool = known.map((tool) => conditionProblems(condition, tool.name, tool.fields));
        for (const problem of metByNoTool(byTool)) problems.push({ path: [...path, ...problem.path], message: problem.message });
      });
    };
    if (rule.input !== undefined) check(rule.input, ['input']);
    if (typeof rule.approval === 'object') check(rule.approval.when, ['approval', 'when']);
  });
  return problems;
}

/**
 * A rule's condition is tested on the input of whichever of its tools is called, so a value of a
 * `oneOf` is refused only when no tool of the rule may hold it, and a condition as a whole only when
 * it can match none of them: `tools: [restart, scale]` with `oneOf: [prod, production]` is right when
 * restart's namespace has prod and scale's has production. Of each tool's problems (`byTool`), those
 * every other tool shares are kept: the same value refused, or the whole condition never met there.
 */
function metByNoTool(byTool: readonly TemplateProblem[][]): TemplateProblem[] {
  const refuses = (problems: readonly TemplateProblem[], path: TemplateProblem['path']) =>
    problems.some((problem) => !isValueProblem(problem) || (isValueProblem({ path }) && problem.path[1] === path[1]));
  return byTool.flatMap((problems) => problems.filter((problem) => byTool.every((others) => refuses(others, problem.path))));
}

/** A problem with one value of a `oneOf` (`oneOf[1]`), not with the condition as a whole. */
function isValueProblem({ path }: Pick<TemplateProblem, 'path'>): boolean {
  return path.length === 2 && path[0] === 'oneOf';
}

/** What the config knows of one input field of a tool. */
interface FieldShape {
  /** `nested`: an object, whose fields are not known here; `flat`: text, a number or true/false. */
  kind: 'flat' | 'nested';
  /** Every value the field may hold, when there are few (a boolean, an enum). */
  values?: readonly ConditionValue[];
  /** Whether the field may hold a value, when the config knows (a command tool's parameter). */
  accepts?: (value: ConditionValue) => boolean;
  type?: 'text' | 'number' | 'boolean';
  /** A number field's range, as its schema holds it. */
  minimum?: number;
  maximum?: number;
  /** What the field accepts, for the message: `true or false`, `one of staging, prod`. */
  described: string;
}

const HTTP_REQUEST_FIELDS: ReadonlyMap<string, FieldShape> = new Map<string, FieldShape>([
  ['method', { kind: 'flat', type: 'text', values: HTTP_REQUEST_METHODS, described: `one of ${HTTP_REQUEST_METHODS.join(', ')} (upper case)` }],
  ['url', { kind: 'flat', type: 'text', described: 'a URL (text)' }],
  ['headers', { kind: 'nested', described: 'header names and values' }],
  ['body', { kind: 'flat', type: 'text', described: 'text (a JSON body is not read field by field)' }],
]);

/** undefined when the command template is broken: that is reported on its own, and starts no check on a guess. */
function commandToolFields(tool: CommandToolConfig): ReadonlyMap<string, FieldShape> | undefined {
  let startingAnArgument: Set<string>;
  try {
    startingAnArgument = new Set(tool.command.flatMap(placeholdersStartingElement));
  } catch {
    return undefined;
  }
  return new Map(Object.entries(tool.parameters).map(([name, parameter]) => [name, parameterShape(parameter, { startsArgument: startingAnArgument.has(name) })]));
}

/** The values the model may pass are those the tool's own schema accepts (parameters-schema.ts). */
function parameterShape(parameter: ParameterConfig, { startsArgument }: { startsArgument: boolean }): FieldShape {
  const schema = parameterToZodSchema(parameter, { startsArgument });
  const accepts = (value: ConditionValue) => schema.safeParse(value).success;
  switch (parameter.type) {
    case 'boolean':
      return { kind: 'flat', type: 'boolean', values: [true, false], accepts, described: 'true or false' };
    case 'number': {
      // A number that starts an argument may not be negative (see parameters-schema.ts).
      const minimum = startsArgument && !parameter.allowLeadingDash && (parameter.minimum === undefined || parameter.minimum < 0) ? 0 : parameter.minimum;
      const { maximum } = parameter;
      const described = `${parameter.integer ? 'a whole number' : 'a number'}${range(minimum, maximum, '')}`;
      return { kind: 'flat', type: 'number', accepts, ...(minimum === undefined ? {} : { minimum }), ...(maximum === undefined ? {} : { maximum }), described };
    }
    case 'string': {
      if (parameter.enum !== undefined) return { kind: 'flat', type: 'text', values: parameter.enum, accepts, described: `one of ${parameter.enum.join(', ')}` };
      const pattern = parameter.pattern === undefined ? '' : ` matching ${parameter.pattern}`;
      const dash = parameter.allowLeadingDash ? '' : ', not starting with -';
      return { kind: 'flat', type: 'text', accepts, described: `text${pattern}${range(parameter.minLength, parameter.maxLength, ' characters')}${dash}` };
    }
  }
}

function range(minimum: number | undefined, maximum: number | undefined, unit: string): string {
  if (minimum !== undefined && maximum !== undefined) return ` from ${minimum} to ${maximum}${unit}`;
  if (minimum !== undefined) return ` of at least ${minimum}${unit}`;
  if (maximum !== undefined) return ` of at most ${maximum}${unit}`;
  return '';
}

/** Relative to the condition: `field`, `equals`, `oneOf[1]`… */
function conditionProblems(condition: PolicyCondition, toolName: string, fields: ReadonlyMap<string, FieldShape>): TemplateProblem[] {
  const [first = condition.field, ...rest] = condition.field.split('.');
  const shape = fields.get(first);
  // An undeclared field is condition-field-check.ts's to report; an object's fields are not known.
  if (shape === undefined || shape.kind === 'nested') return [];
  const whose = `${toolName}'s ${first}`;
  const never = 'the condition would never match';
  if (rest.length > 0) {
    return [{ path: ['field'], message: `reads ${rest.join('.')} inside ${first}, but ${whose} is ${shape.described}, with no fields inside; ${never}` }];
  }
  if (condition.operator === 'oneOf') {
    return condition.values.flatMap((value, index) =>
      canBeMet({ field: condition.field, operator: 'equals', value }, shape) === false
        ? [{ path: ['oneOf', index], message: `lists ${shown(value)}, which ${whose} never is: it accepts ${shape.described}${yamlHint(value, shape)}; ${never}` }]
        : [],
    );
  }
  if (canBeMet(condition, shape) !== false) return [];
  if (condition.operator === 'equals') {
    return [{ path: ['equals'], message: `is ${shown(condition.value)}, which ${whose} never is: it accepts ${shape.described}${yamlHint(condition.value, shape)}; ${never}` }];
  }
  return [{ path: [condition.operator], message: `is met by no value ${whose} may hold: it accepts ${shape.described}; ${never}` }];
}

/**
 * Whether some value the field may hold surely meets the condition ("unclear", the evaluator's
 * lean for a value it cannot read, does not count: no input would ever be a sure match);
 * undefined when the config cannot tell.
 */
function canBeMet(condition: PolicyCondition, shape: FieldShape): boolean | undefined {
  const candidates = shape.values ?? candidatesFor(condition, shape);
  if (candidates === undefined) return undefined;
  const outcome = compileConditionOutcome(condition);
  return candidates.some((value) => (shape.accepts?.(value) ?? true) && outcome({ [condition.field]: value }) === 'met');
}

/**
 * For a field with endless values, the few that would meet the condition if any does; undefined
 * when they cannot be listed (a pattern against free text or a number, a number against text).
 */
function candidatesFor(condition: PolicyCondition, shape: FieldShape): ConditionValue[] | undefined {
  if (shape.accepts === undefined) return undefined;
  switch (condition.operator) {
    case 'equals':
    case 'oneOf': {
      const values = condition.operator === 'equals' ? [condition.value] : condition.values;
      if (shape.type === 'number') return values.flatMap((value) => (typeof value === 'boolean' || !Number.isFinite(Number(value)) ? [] : [Number(value)]));
      // Text equals a number when it reads as that number (`08080`), which the pattern may allow.
      if (values.some((value) => typeof value === 'number')) return undefined;
      return values.map(String);
    }
    case 'matches':
      return undefined;
    default: {
      if (shape.type !== 'number') return undefined;
      // The compared value, the whole numbers and numbers next to it, and the ends of the range:
      // if any number of the range is on the right side, one of these is.
      const { value } = condition;
      const near = [value, value - 1, value + 1, Math.floor(value), Math.ceil(value), Math.floor(value) + 1, Math.ceil(value) - 1];
      const ends = [shape.minimum, shape.maximum].flatMap((end) => (end === undefined ? [] : [end, Math.floor(end), Math.ceil(end)]));
      return [...near, ...ends];
    }
  }
}

function shown(value: ConditionValue): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/** YAML 1.2 reads yes/no/on/off as text, where YAML 1.1 (and many people) read true/false. */
function yamlHint(value: ConditionValue, shape: FieldShape): string {
  if (shape.type !== 'boolean' || typeof value !== 'string' || !/^(y|yes|n|no|on|off)$/i.test(value)) return '';
  return ` (YAML reads ${value} as text, not true or false; write true or false)`;
}
