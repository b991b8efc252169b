import { producedResponsesItem } from './openai-responses-reply.js';

export interface ConversationToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ConversationEntry {
  role: string;
  text?: string;
  toolCalls?: ConversationToolCall[];
  toolCallId?: string;
}

/**
 * The conversation a model request carried, in one shape for both APIs, so assertions do not
 * depend on which OpenAI API the bot uses. Entries carry only the keys that apply (toEqual-friendly).
 */
export function conversationOf(request: { api: 'chat' | 'responses'; body: any }): ConversationEntry[] {
  return request.api === 'chat' ? fromChatMessages(request.body?.messages) : fromResponsesInput(request.body);
}

function fromChatMessages(messages: unknown): ConversationEntry[] {
  if (!Array.isArray(messages)) return [];
  return messages.map((message: any) =>
    entry({
      role: String(message.role),
      text: textOf(message.content),
      toolCalls: Array.isArray(message.tool_calls)
        ? message.tool_calls.map((toolCall: any) => ({
            id: String(toolCall.id),
            name: String(toolCall.function?.name),
            arguments: String(toolCall.function?.arguments ?? ''),
          }))
        : undefined,
      toolCallId: message.role === 'tool' ? String(message.tool_call_id) : undefined,
    }),
  );
}

function fromResponsesInput(body: any): ConversationEntry[] {
  const entries: ConversationEntry[] = [];
  if (typeof body?.instructions === 'string') entries.push({ role: 'system', text: body.instructions });
  const input: any[] = typeof body?.input === 'string' ? [{ role: 'user', content: body.input }] : Array.isArray(body?.input) ? body.input : [];
  let previousWasAssistantItem = false;
  for (const rawItem of input) {
    const item: any = rawItem?.type === 'item_reference' ? (producedResponsesItem(rawItem.id) ?? rawItem) : rawItem;
    if (item?.type === 'function_call') {
      const toolCall = { id: String(item.call_id), name: String(item.name), arguments: String(item.arguments ?? '') };
      const previous = entries.at(-1);
      // Responses lists a step's text and calls as separate items; Chat puts them in one message.
      if (previousWasAssistantItem && previous?.role === 'assistant') {
        previous.toolCalls = [...(previous.toolCalls ?? []), toolCall];
      } else {
        entries.push({ role: 'assistant', toolCalls: [toolCall] });
      }
      previousWasAssistantItem = true;
    } else if (item?.type === 'function_call_output') {
      entries.push(entry({ role: 'tool', text: textOf(item.output), toolCallId: String(item.call_id) }));
      previousWasAssistantItem = false;
    } else if (item?.type === 'item_reference') {
      entries.push({ role: 'assistant', text: `[unresolved item_reference ${String(item.id)}]` });
      previousWasAssistantItem = true;
    } else if (typeof item?.role === 'string') {
      entries.push(entry({ role: item.role, text: textOf(item.content) }));
      previousWasAssistantItem = item.role === 'assistant';
    } else {
      // Reasoning and hosted-tool items carry no conversation text.
      previousWasAssistantItem = false;
    }
  }
  return entries;
}

function textOf(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts = content.filter((part: any) => typeof part?.text === 'string').map((part: any) => part.text as string);
  return texts.length > 0 ? texts.join('\n') : undefined;
}

function entry(fields: { role: string; text: string | undefined; toolCalls?: ConversationToolCall[] | undefined; toolCallId?: string | undefined }): ConversationEntry {
  return {
    role: fields.role,
    ...(fields.text !== undefined ? { text: fields.text } : {}),
    ...(fields.toolCalls && fields.toolCalls.length > 0 ? { toolCalls: fields.toolCalls } : {}),
    ...(fields.toolCallId !== undefined ? { toolCallId: fields.toolCallId } : {}),
  };
}
