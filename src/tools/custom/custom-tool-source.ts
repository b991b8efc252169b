import { createStaticToolSource, type ToolSourceFactory } from '../tool-source.js';
import type { ToolDefinition } from '../tool-definition.js';

/** The tools passed to `createBot` in TypeScript (`defineTool`); a malformed one is a configuration problem. */
export const customToolSources: ToolSourceFactory = ({ customTools, problems }) => {
  const valid: ToolDefinition[] = [];
  for (const tool of customTools) {
    const problem = customToolProblem(tool);
    if (problem) problems.push({ field: `tools.${String(tool?.name)}`, message: problem });
    else valid.push(tool);
  }
  return valid.length === 0 ? [] : [createStaticToolSource({ kind: 'custom', id: 'custom' }, valid)];
};

function customToolProblem(tool: ToolDefinition | undefined): string | undefined {
  if (typeof tool !== 'object' || tool === null) return 'is not a tool definition';
  if (typeof tool.name !== 'string' || !/^[A-Za-z0-9_.-]{1,64}$/.test(tool.name)) return 'needs a name of letters, digits, _, - and . (at most 64)';
  if (typeof tool.description !== 'string' || tool.description.trim() === '') return 'needs a description';
  if (tool.inputSchema === undefined || tool.inputSchema === null) return 'needs an inputSchema (a zod schema or jsonSchema())';
  return undefined;
}
