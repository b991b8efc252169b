import type { JSONSchema7, LanguageModelV4CallOptions, LanguageModelV4ToolResultOutput } from '@ai-sdk/provider';

/** A tool the call offers, with what the demo model needs of its JSON Schema. */
export interface OfferedTool {
  name: string;
  /** The input's properties, by name; empty when the schema does not list them. */
  properties: Record<string, JSONSchema7>;
}

/** A call of the model's that has a result: ran, failed, denied, expired, answered… */
export interface ToolOutcome {
  toolCallId: string;
  toolName: string;
  /** The input the model proposed (a human may have run another version: see the output). */
  input: unknown;
  output: LanguageModelV4ToolResultOutput;
}

/** What the demo model reads of a call: the request, what came of its own calls, the tools. */
export interface DemoPrompt {
  /** The latest user message's text; empty when there is none. */
  request: string;
  /** Who sent it (`U…`), when the bot named them (`<@U…> says:`). */
  requesterId?: string;
  /** Results of the calls of the model's last message, when they are what the prompt ends with. */
  outcomes: ToolOutcome[];
  /** The model already spoke in this conversation. */
  answeredBefore: boolean;
  tools: Map<string, OfferedTool>;
}

export function readDemoPrompt(options: Pick<LanguageModelV4CallOptions, 'prompt' | 'tools'>): DemoPrompt {
  const { prompt } = options;
  const lastUser = prompt.findLast((message) => message.role === 'user');
  const request = lastUser?.role === 'user' ? lastUser.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n') : '';
  const requesterId = /^<@([A-Z0-9]+)> says:/.exec(request)?.[1];
  return {
    request,
    ...(requesterId === undefined ? {} : { requesterId }),
    outcomes: trailingOutcomes(prompt),
    answeredBefore: prompt.some((message) => message.role === 'assistant'),
    tools: new Map(
      (options.tools ?? []).flatMap((tool) =>
        tool.type === 'function' ? [[tool.name, { name: tool.name, properties: propertiesOf(tool.inputSchema) }] as const] : [],
      ),
    ),
  };
}

// Only results the prompt ENDS with are news: older ones were answered in an earlier step.
function trailingOutcomes(prompt: LanguageModelV4CallOptions['prompt']): ToolOutcome[] {
  const lastAssistant = prompt.findLastIndex((message) => message.role === 'assistant');
  if (lastAssistant < 0 || prompt.at(-1)?.role !== 'tool') return [];
  const assistant = prompt[lastAssistant];
  const inputs = new Map<string, unknown>();
  if (assistant?.role === 'assistant') {
    for (const part of assistant.content) if (part.type === 'tool-call') inputs.set(part.toolCallId, part.input);
  }
  return prompt.slice(lastAssistant + 1).flatMap((message) =>
    message.role === 'tool'
      ? message.content.flatMap((part) =>
          part.type === 'tool-result' ? [{ toolCallId: part.toolCallId, toolName: part.toolName, input: inputs.get(part.toolCallId), output: part.output }] : [],
        )
      : [],
  );
}

function propertiesOf(schema: JSONSchema7): Record<string, JSONSchema7> {
  const properties = schema.properties ?? {};
  return Object.fromEntries(Object.entries(properties).flatMap(([name, property]) => (typeof property === 'object' ? [[name, property]] : [])));
}
