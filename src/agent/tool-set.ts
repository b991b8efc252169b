import { tool, type ToolApprovalConfiguration, type ToolSet } from 'ai';
import type { ToolContext, ToolDefinition } from '../tools/tool-definition.js';
import type { EditNote } from './apply-edits.js';

export type TurnContext = Omit<ToolContext, 'toolCallId' | 'idempotencyKey' | 'abortSignal'>;

/** What ran during one turn, so a turn that fails after executing tools can still record them. */
export interface ExecutionRecord {
  toolCallId: string;
  toolName: string;
  output: unknown;
}

/**
 * Builds the AI SDK tools for one turn. Tools are rebuilt per turn (they hold functions and are
 * never persisted), which is also how any process can resume a turn another process started.
 */
export function createTurnTools(options: {
  definitions: readonly ToolDefinition[];
  context: TurnContext;
  executions: ExecutionRecord[];
  /** Calls a human edited: their results carry the note so the model knows what changed. */
  edits?: ReadonlyMap<string, EditNote>;
}): ToolSet {
  const tools: ToolSet = {};
  for (const definition of options.definitions) {
    const execute = definition.execute;
    if (!execute) {
      // No execute: the AI SDK stops the turn at this call and waits for a result we supply.
      tools[definition.name] = tool({ description: definition.description, inputSchema: definition.inputSchema });
      continue;
    }
    tools[definition.name] = tool({
      description: definition.description,
      inputSchema: definition.inputSchema,
      execute: async (input: unknown, { toolCallId, abortSignal }) => {
        const output = await execute(input, {
          ...options.context,
          toolCallId,
          // Stable for this call across retries and replicas: the thread plus the model's call id.
          idempotencyKey: `${options.context.teamId}:${options.context.channel}:${options.context.threadTs}:${toolCallId}`,
          ...(abortSignal === undefined ? {} : { abortSignal }),
        });
        const edit = options.edits?.get(toolCallId);
        const result = edit ? { humanEdit: edit, result: output } : output;
        options.executions.push({ toolCallId, toolName: definition.name, output: result });
        return result;
      },
    });
  }
  return tools;
}

/**
 * The one approval gate, handed to the AI SDK's `toolApproval`. A tool without a rule, an unknown
 * tool, or a rule that throws all need a human: the gate fails closed.
 */
export function createToolApproval(options: {
  definitions: readonly ToolDefinition[];
  context: TurnContext;
}): ToolApprovalConfiguration<ToolSet, never> {
  const byName = new Map(options.definitions.map((definition) => [definition.name, definition]));
  return async ({ toolCall }) => {
    const definition = byName.get(toolCall.toolName);
    // Nothing runs for a human-answered tool, so there is nothing to approve.
    if (definition && !definition.execute) return 'not-applicable';
    const rule = definition?.approval ?? 'always';
    if (rule === 'never') return 'not-applicable';
    if (rule === 'always') return 'user-approval';
    try {
      return (await rule(toolCall.input, options.context)) ? 'user-approval' : 'not-applicable';
    } catch {
      return 'user-approval';
    }
  };
}
