import { z } from 'zod';
import { parameterToZodSchema } from '../tools/command/parameters-schema.js';
import { exactPatternSchema } from './exact-pattern-schema.js';

/**
 * The `parameters:` entries of a command tool in `countersign.yml`. What the model may pass is
 * built from these by `parametersToZodSchema`; this file only checks the config itself.
 */

export type { BooleanParameterConfig, NumberParameterConfig, ParameterConfig, StringParameterConfig } from '../tools/command/parameter-config.js';

/** Narrower than tool names: a parameter name must also be a valid `{placeholder}`. */
export const PARAMETER_NAME_PATTERN = /^[a-zA-Z][a-zA-Z0-9_]{0,63}$/;

const description = z.string().trim().min(1, 'must not be empty').optional();

const stringParameter = z
  .strictObject({
    type: z.literal('string'),
    description,
    enum: z.array(z.string()).min(1, 'must list at least one value').optional(),
    pattern: exactPatternSchema.optional(),
    minLength: z.int().min(0).optional(),
    maxLength: z.int().min(0).optional(),
    default: z.string().optional(),
    optional: z.boolean().default(false),
    allowLeadingDash: z.boolean().default(false),
  })
  .superRefine((parameter, context) => {
    if (parameter.enum !== undefined) {
      for (const key of ['pattern', 'minLength', 'maxLength', 'allowLeadingDash'] as const) {
        if (parameter[key] !== undefined && parameter[key] !== false) {
          context.addIssue({ code: 'custom', path: [key], message: 'has no effect together with enum; remove one of them' });
        }
      }
      if (new Set(parameter.enum).size !== parameter.enum.length) {
        context.addIssue({ code: 'custom', path: ['enum'], message: 'lists a value more than once' });
      }
    }
    if (parameter.minLength !== undefined && parameter.maxLength !== undefined && parameter.minLength > parameter.maxLength) {
      context.addIssue({ code: 'custom', path: ['maxLength'], message: 'must not be less than minLength' });
    }
  });

const numberParameter = z
  .strictObject({
    type: z.literal('number'),
    description,
    integer: z.boolean().default(false),
    minimum: z.number().optional(),
    maximum: z.number().optional(),
    default: z.number().optional(),
    optional: z.boolean().default(false),
    allowLeadingDash: z.boolean().default(false),
  })
  .superRefine((parameter, context) => {
    if (parameter.minimum !== undefined && parameter.maximum !== undefined && parameter.minimum > parameter.maximum) {
      context.addIssue({ code: 'custom', path: ['maximum'], message: 'must not be less than minimum' });
    }
  });

const booleanParameter = z.strictObject({
  type: z.literal('boolean'),
  description,
  default: z.boolean().optional(),
  optional: z.boolean().default(false),
});

export const parameterConfigSchema = z
  .discriminatedUnion('type', [stringParameter, numberParameter, booleanParameter])
  .superRefine((parameter, context) => {
    // A default the model could never send would pass straight into argv unchecked.
    if (parameter.default === undefined) return;
    // Where the parameter stands in the command is for checkCommandTemplates to judge.
    const result = parameterToZodSchema(parameter, { startsArgument: false }).safeParse(parameter.default);
    if (!result.success) {
      context.addIssue({ code: 'custom', path: ['default'], message: `does not satisfy the parameter's own rules: ${result.error.issues[0]?.message}` });
    }
  });

export const parameterNameSchema = z.string().regex(PARAMETER_NAME_PATTERN, {
  error: 'is not a valid parameter name (letters, digits and _, starting with a letter, at most 64)',
});

/** Keys a parameter may have, for "did you mean" hints. */
export const PARAMETER_CONFIG_KEYS = [
  ...new Set([stringParameter, numberParameter, booleanParameter].flatMap((schema) => Object.keys(schema.shape))),
];
