import { z } from 'zod';
import { parameterToZodSchema } from '../tools/command/parameters-schema.js';
import { DEFAULT_INSTRUCTIONS } from './default-instructions.js';

/**
 * The shape of `countersign.yml`. Every object is strict so a typo such as `aproval:` is reported
 * instead of silently falling back to a default; for approval the default fails closed anyway,
 * but for `timeoutSeconds` or `pattern` a silent typo would loosen the tool.
 */

export interface StringParameterConfig {
  type: 'string';
  description?: string;
  enum?: string[];
  /** Must match the whole value (it is anchored for you). */
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  default?: string;
  optional: boolean;
  /** Values starting with `-` are refused unless set, so the model cannot smuggle in `--all`. */
  allowLeadingDash: boolean;
}

export interface NumberParameterConfig {
  type: 'number';
  description?: string;
  integer: boolean;
  minimum?: number;
  maximum?: number;
  default?: number;
  optional: boolean;
}

export interface BooleanParameterConfig {
  type: 'boolean';
  description?: string;
  default?: boolean;
  optional: boolean;
}

export type ParameterConfig = StringParameterConfig | NumberParameterConfig | BooleanParameterConfig;

export type CommandApproval = 'always' | 'never';

export interface CommandToolConfig {
  name: string;
  description: string;
  /** Argv template; `{name}` placeholders refer to `parameters`. Never run through a shell. */
  command: string[];
  parameters: Record<string, ParameterConfig>;
  approval: CommandApproval;
  timeoutSeconds: number;
  workingDirectory?: string;
  /** Characters of stdout and of stderr passed back to the model. */
  outputLimit: number;
}

export interface HistoryConfig {
  ttlHours: number;
  /** Cap on stored model messages per thread. */
  maxMessages: number;
  /** Cap on the serialized history size per thread. */
  maxBytes: number;
}

export interface AgentConfig {
  /** Model steps per turn (generateText `stopWhen`). */
  maxSteps: number;
}

export interface CountersignConfig {
  instructions: string;
  history: HistoryConfig;
  agent: AgentConfig;
  tools: CommandToolConfig[];
}

export const TOOL_NAME_PATTERN = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;
/** Narrower than tool names: a parameter name must also be a valid `{placeholder}`. */
export const PARAMETER_NAME_PATTERN = /^[a-zA-Z][a-zA-Z0-9_]{0,63}$/;

export const DEFAULT_HISTORY: HistoryConfig = { ttlHours: 7 * 24, maxMessages: 200, maxBytes: 256 * 1024 };
export const DEFAULT_AGENT: AgentConfig = { maxSteps: 10 };
export const DEFAULT_TIMEOUT_SECONDS = 30;
export const MAX_TIMEOUT_SECONDS = 3600;
export const DEFAULT_OUTPUT_LIMIT = 4000;

// A key written with no value (`tools:` after commenting every entry out) parses as null.
const nullAsAbsent = (value: unknown) => (value === null ? undefined : value);
const description = z.string().trim().min(1, 'must not be empty').optional();

const stringParameter = z
  .strictObject({
    type: z.literal('string'),
    description,
    enum: z.array(z.string()).min(1, 'must list at least one value').optional(),
    pattern: z.string().refine(isValidRegularExpression, 'is not a valid regular expression').optional(),
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

const parameter = z
  .discriminatedUnion('type', [stringParameter, numberParameter, booleanParameter])
  .superRefine((parameter, context) => {
    // A default the model could never send would pass straight into argv unchecked.
    if (parameter.default === undefined) return;
    const result = parameterToZodSchema(parameter).safeParse(parameter.default);
    if (!result.success) {
      context.addIssue({ code: 'custom', path: ['default'], message: `does not satisfy the parameter's own rules: ${result.error.issues[0]?.message}` });
    }
  });

const parameterName = z.string().regex(PARAMETER_NAME_PATTERN, {
  error: 'is not a valid parameter name (letters, digits and _, starting with a letter, at most 64)',
});

export const commandToolSchema = z.strictObject({
  name: z.string().regex(TOOL_NAME_PATTERN, { error: 'must be letters, digits, _ or -, starting with a letter, at most 64' }),
  description: z.string().trim().min(1, 'must not be empty'),
  command: z.array(z.string()).min(1, 'must have at least the executable'),
  parameters: z.preprocess(nullAsAbsent, z.record(parameterName, parameter).default({})),
  approval: z.enum(['always', 'never']).default('always'),
  timeoutSeconds: z.number().positive().max(MAX_TIMEOUT_SECONDS).default(DEFAULT_TIMEOUT_SECONDS),
  workingDirectory: z.string().min(1, 'must not be empty').optional(),
  outputLimit: z.int().min(1).max(1_000_000).default(DEFAULT_OUTPUT_LIMIT),
});

export const countersignConfigSchema = z.strictObject({
  instructions: z.string().trim().min(1, 'must not be empty').default(DEFAULT_INSTRUCTIONS),
  history: z.preprocess(
    nullAsAbsent,
    z
      .strictObject({
        ttlHours: z.number().positive().default(DEFAULT_HISTORY.ttlHours),
        maxMessages: z.int().min(1).default(DEFAULT_HISTORY.maxMessages),
        maxBytes: z.int().min(1024).default(DEFAULT_HISTORY.maxBytes),
      })
      .prefault({}),
  ),
  agent: z.preprocess(
    nullAsAbsent,
    z.strictObject({ maxSteps: z.int().min(1).max(100).default(DEFAULT_AGENT.maxSteps) }).prefault({}),
  ),
  tools: z.preprocess(nullAsAbsent, z.array(commandToolSchema).default([])),
});

/** Every key the schema knows, for "did you mean" hints on unknown keys. */
export const KNOWN_CONFIG_KEYS = [
  ...Object.keys(countersignConfigSchema.shape),
  'ttlHours', 'maxMessages', 'maxBytes', 'maxSteps',
  ...Object.keys(commandToolSchema.shape),
  ...new Set([stringParameter, numberParameter, booleanParameter].flatMap((schema) => Object.keys(schema.shape))),
];

function isValidRegularExpression(pattern: string): boolean {
  try {
    new RegExp(pattern, 'u');
    return true;
  } catch {
    return false;
  }
}

// Compile-time check that the schema's output matches the documented interfaces.
const _outputMatches: (value: z.output<typeof countersignConfigSchema>) => CountersignConfig = (value) => value;
void _outputMatches;
