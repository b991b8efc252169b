/**
 * The shape of `countersign.yml`. Every object is strict so a typo such as `aproval:` is reported
 * instead of silently falling back to a default; for approval the default fails closed anyway,
 * but for `timeoutSeconds` or `pattern` a silent typo would loosen the tool.
 */

import { z } from 'zod';
import { DEFAULT_INSTRUCTIONS } from './default-instructions.js';
import { PARAMETER_CONFIG_KEYS, parameterConfigSchema, parameterNameSchema, type ParameterConfig } from './parameter-config-schema.js';
import { POLICY_CONFIG_KEYS, policySchema, type PolicyConfig } from './policy-config-schema.js';
import { HTTP_CONFIG_KEYS, httpSchema, type HttpConfig } from './http-config-schema.js';
import { MCP_CONFIG_KEYS, mcpServersSchema, type McpServerConfig } from './mcp-config-schema.js';
import { SCHEDULE_CONFIG_KEYS, schedulesSchema, type ScheduleConfig } from './schedule-config-schema.js';

export type { ScheduleConfig } from './schedule-config-schema.js';

export type { HttpBaseConfig, HttpConfig } from './http-config-schema.js';
export type { McpHttpServerConfig, McpServerConfig, McpStdioServerConfig } from './mcp-config-schema.js';

export type {
  BooleanParameterConfig,
  NumberParameterConfig,
  ParameterConfig,
  StringParameterConfig,
} from './parameter-config-schema.js';

export type {
  ApproverSpec,
  AutoApproveConfig,
  AutoApprovePermission,
  ConditionValue,
  ExpiryOutcome,
  GrantPermission,
  NumericComparison,
  PolicyApproval,
  PolicyCondition,
  PolicyConfig,
  PolicyRule,
  PolicySettings,
} from './policy-config-schema.js';

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
  /** Who may approve which calls, when, and for how long; see `policy-config-schema.ts`. */
  policy: PolicyConfig;
  /** The `http_request` tool and the base URLs it may reach; absent means no such tool. */
  http?: HttpConfig;
  /** MCP servers by name; their tools are `<name>.<tool>`. Absent means none. */
  mcpServers?: Record<string, McpServerConfig>;
  /** Prompts the bot runs by itself on a cron schedule; see `schedule-config-schema.ts`. */
  schedules: ScheduleConfig[];
}

export const TOOL_NAME_PATTERN = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

export const DEFAULT_HISTORY: HistoryConfig = { ttlHours: 7 * 24, maxMessages: 200, maxBytes: 256 * 1024 };
/**
 * A year: far past any use of a thread's history, and it keeps the TTL of every save a whole number
 * of milliseconds Redis takes (1e300 hours is 3.6e306 ms, which PEXPIRE refuses: every save would fail).
 */
export const MAX_HISTORY_TTL_HOURS = 365 * 24;
export const DEFAULT_AGENT: AgentConfig = { maxSteps: 10 };
export const DEFAULT_TIMEOUT_SECONDS = 30;
export const MAX_TIMEOUT_SECONDS = 3600;
export const DEFAULT_OUTPUT_LIMIT = 4000;

// A key written with no value (`tools:` after commenting every entry out) parses as null.
const nullAsAbsent = (value: unknown) => (value === null ? undefined : value);

export const commandToolSchema = z.strictObject({
  name: z.string().regex(TOOL_NAME_PATTERN, { error: 'must be letters, digits, _ or -, starting with a letter, at most 64' }),
  description: z.string().trim().min(1, 'must not be empty'),
  command: z.array(z.string()).min(1, 'must have at least the executable'),
  parameters: z.preprocess(nullAsAbsent, z.record(parameterNameSchema, parameterConfigSchema).default({})),
  approval: z.enum(['always', 'never']).default('always'),
  timeoutSeconds: z.number().positive().max(MAX_TIMEOUT_SECONDS).default(DEFAULT_TIMEOUT_SECONDS),
  workingDirectory: z.string().min(1, 'must not be empty').optional(),
  outputLimit: z.int().min(1).max(1_000_000).default(DEFAULT_OUTPUT_LIMIT),
});

const historySchema = z.strictObject({
  ttlHours: z.number().positive().max(MAX_HISTORY_TTL_HOURS, `must be at most ${MAX_HISTORY_TTL_HOURS} (a year)`).default(DEFAULT_HISTORY.ttlHours),
  maxMessages: z.int().min(1).default(DEFAULT_HISTORY.maxMessages),
  maxBytes: z.int().min(1024).default(DEFAULT_HISTORY.maxBytes),
});

const agentSchema = z.strictObject({ maxSteps: z.int().min(1).max(100).default(DEFAULT_AGENT.maxSteps) });

export const countersignConfigSchema = z.strictObject({
  instructions: z.string().trim().min(1, 'must not be empty').default(DEFAULT_INSTRUCTIONS),
  history: z.preprocess(nullAsAbsent, historySchema.prefault({})),
  agent: z.preprocess(nullAsAbsent, agentSchema.prefault({})),
  tools: z.preprocess(nullAsAbsent, z.array(commandToolSchema).default([])),
  policy: z.preprocess(nullAsAbsent, policySchema.prefault({})),
  http: z.preprocess(nullAsAbsent, httpSchema.optional()),
  mcpServers: z.preprocess(nullAsAbsent, mcpServersSchema.optional()),
  schedules: z.preprocess(nullAsAbsent, schedulesSchema.default([])),
});

/** Every key the schema knows, for "did you mean" hints on unknown keys. */
export const KNOWN_CONFIG_KEYS: readonly string[] = [
  ...new Set([countersignConfigSchema, historySchema, agentSchema, commandToolSchema].flatMap((schema) => Object.keys(schema.shape))),
  ...PARAMETER_CONFIG_KEYS,
  ...POLICY_CONFIG_KEYS,
  ...HTTP_CONFIG_KEYS,
  ...MCP_CONFIG_KEYS,
  ...SCHEDULE_CONFIG_KEYS,
];
