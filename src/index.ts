/** The package's public surface: run the bot with your own tools from a small file. */
export { createBot, type Bot, type CreateBotOptions } from './create-bot.js';
export { defineTool, type ApprovalRule, type ToolContext, type ToolDefinition } from './tools/tool-definition.js';
export { parseEnvironment, type EnvironmentConfig } from './config/environment.js';
export { loadConfigFile, parseConfigFile } from './config/config-file.js';
export type { CountersignConfig, ScheduleConfig } from './config/config-schema.js';
export type { ScheduleClock } from './conversation/scheduled-turns.js';
export { ConfigError, type ConfigProblem } from './config/config-error.js';
export { createRedisStore } from './store/redis-store.js';
export { createMemoryStore } from './store/memory-store.js';
export type { StateStore } from './store/state-store.js';
export { loadTools, withWireToolNames, type LoadedTools } from './tools/load-tools.js';
export type {
  ApprovalHookDecision,
  ApprovalHookFunction,
  ApprovalHookOption,
  ApprovalHookRequest,
} from './approvals/approval-hook.js';
export type { PolicyEvaluation } from './approvals/policy/evaluate-policy.js';
