import type { ListToolsResult } from '@ai-sdk/mcp';
import type { Redactor } from '../http/redact.js';

type ListedTool = ListToolsResult['tools'][number];

/**
 * The listed tool with every configured secret redacted from what the server wrote about it: its
 * description, title, annotations and every string in its input schema (descriptions, defaults,
 * enums, examples). These reach the model's tool list and every approval card, and a server
 * commonly names what it is connected to there (a database URL with its password).
 * Object keys are kept: they are the tool's parameter names, which the model must send back as they are.
 */
export function redactListedTool(tool: ListedTool, redact: Redactor): ListedTool {
  return {
    ...tool,
    ...(tool.description !== undefined ? { description: redact(tool.description) } : {}),
    ...(tool.title !== undefined ? { title: redact(tool.title) } : {}),
    ...(tool.annotations !== undefined ? { annotations: redactStrings(tool.annotations, redact) } : {}),
    inputSchema: redactStrings(tool.inputSchema, redact),
  };
}

function redactStrings<T>(value: T, redact: Redactor): T {
  if (typeof value === 'string') return redact(value) as T;
  if (Array.isArray(value)) return value.map((item) => redactStrings(item, redact)) as T;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactStrings(item, redact)])) as T;
  }
  return value;
}
