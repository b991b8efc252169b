import { z } from 'zod';
import type { ParameterConfig } from './parameter-config.js';
import { placeholdersStartingElement, type ArgvValue } from './argv-template.js';
import { compileExactPattern } from '../exact-pattern.js';

export type ParameterValues = Record<string, ArgvValue>;

// Newlines and NUL have no business in an argv value and are how log lines and C strings get forged.
const CONTROL_LINE_BREAK_OR_NUL = /[\0\r\n]/;

/**
 * Turns config-file parameters into the zod object the model's input is validated against (and
 * the approval card's Edit modal is built from). Unknown keys are refused: a model that sends
 * `force: true` should hear that no such parameter exists rather than have it silently dropped.
 * `command` is the tool's argv template: a number whose placeholder starts one of its elements may
 * not be negative. Without it, every number is held to that rule.
 */
export function parametersToZodSchema(
  parameters: Record<string, ParameterConfig>,
  { command }: { command?: readonly string[] } = {},
): z.ZodObject<Record<string, z.ZodType<ArgvValue>>> {
  const startingAnArgument = command === undefined ? undefined : new Set(command.flatMap(placeholdersStartingElement));
  const shape: Record<string, z.ZodType<ArgvValue>> = {};
  for (const [name, parameter] of Object.entries(parameters)) {
    let schema: z.ZodType<ArgvValue> = parameterToZodSchema(parameter, { startsArgument: startingAnArgument?.has(name) ?? true });
    if (parameter.default !== undefined) schema = schema.default(parameter.default as never);
    else if (parameter.optional) schema = schema.optional();
    shape[name] = parameter.description === undefined ? schema : schema.describe(parameter.description);
  }
  return z.strictObject(shape);
}

/**
 * The schema for one value, without `default`/`optional`; also used to check configured defaults.
 * `startsArgument`: the value may be the first characters of an argument, so it must not make it
 * start with `-`.
 */
export function parameterToZodSchema(parameter: ParameterConfig, { startsArgument }: { startsArgument: boolean }): z.ZodType<string | number | boolean> {
  switch (parameter.type) {
    case 'boolean':
      return z.boolean();
    case 'number':
      return numberSchema(parameter, { refuseNegative: startsArgument && !parameter.allowLeadingDash });
    case 'string':
      return stringSchema(parameter);
  }
}

function numberSchema(parameter: Extract<ParameterConfig, { type: 'number' }>, { refuseNegative }: { refuseNegative: boolean }): z.ZodType<number> {
  let schema = parameter.integer ? z.int() : z.number();
  const { minimum } = parameter;
  // `kill -TERM {pid}` given -1 signals every process the bot's user owns. A number renders with a
  // leading "-" exactly when it is below 0 (-0 renders "0"), so `min(0)` is the string rule for
  // numbers, and it puts `minimum: 0` in the JSON schema the model and the Edit form see.
  if (refuseNegative && (minimum === undefined || minimum < 0)) {
    schema = schema.min(0, 'must not be negative: standing first in an argument, "-" would make it an option');
  } else if (minimum !== undefined) {
    schema = schema.min(minimum);
  }
  if (parameter.maximum !== undefined) schema = schema.max(parameter.maximum);
  return schema;
}

function stringSchema(parameter: Extract<ParameterConfig, { type: 'string' }>): z.ZodType<string> {
  // The values are the author's own; free-text rules below guard against the model, not the author.
  if (parameter.enum !== undefined) return z.enum(parameter.enum as [string, ...string[]]);
  let schema = z.string().refine((value) => !CONTROL_LINE_BREAK_OR_NUL.test(value), 'must not contain line breaks or NUL characters');
  if (!parameter.allowLeadingDash) {
    // Otherwise `--all` or `--kubeconfig=/tmp/x` passed as a "name" becomes an option of the command.
    schema = schema.refine((value) => !value.startsWith('-'), 'must not start with "-"');
  }
  if (parameter.minLength !== undefined) schema = schema.min(parameter.minLength);
  if (parameter.maxLength !== undefined) schema = schema.max(parameter.maxLength);
  if (parameter.pattern !== undefined) {
    // Anchored so `[a-z-]+` means "only these characters", which is what config authors expect.
    const anchored = `^(?:${parameter.pattern})$`;
    const compiled = compileExactPattern(anchored);
    // Linear time: the value is the model's, and zod still runs this after `max` has failed. The
    // loader refuses a pattern that cannot run so; one that reaches here anyway refuses every value.
    const matches = compiled.kind === 'linear' ? (value: string) => compiled.pattern.test(value) : () => false;
    // `meta` keeps the pattern in the JSON schema the model and the Edit form see.
    schema = schema.refine(matches, `must match ${parameter.pattern}`).meta({ pattern: anchored });
  }
  return schema;
}
