import { splitArgumentsIntoDeltas, splitIntoDeltas, type ModelAnswer } from './scripted-reply.js';

/**
 * Responses API answers shaped like api.openai.com's (`openaiResponsesResponseSchema` /
 * `openaiResponsesChunkSchema` in @ai-sdk/openai's dist).
 */
export type ResponsesOutputItem =
  | { type: 'message'; id: string; status: 'completed'; role: 'assistant'; content: Array<{ type: 'output_text'; text: string; annotations: []; logprobs: [] }> }
  | { type: 'function_call'; id: string; status: 'completed'; call_id: string; name: string; arguments: string };

/**
 * Every item the fakes produced, by id. With `store: true` (the SDK default) later requests send
 * `{type:'item_reference', id}` instead of the assistant's earlier text; conversationOf resolves
 * those here. Ids are process-unique, so one registry serves every fake instance.
 */
const producedItems = new Map<string, ResponsesOutputItem>();
let itemSequence = 0;

export function producedResponsesItem(id: string): ResponsesOutputItem | undefined {
  return producedItems.get(id);
}

export function responsesOutputItems(answer: ModelAnswer): ResponsesOutputItem[] {
  const nextItemId = (prefix: string) => {
    itemSequence += 1;
    return `${prefix}_fake${String(itemSequence).padStart(6, '0')}`;
  };
  const items: ResponsesOutputItem[] = [];
  if (answer.text !== undefined) {
    items.push({
      type: 'message',
      id: nextItemId('msg'),
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: answer.text, annotations: [], logprobs: [] }],
    });
  }
  for (const toolCall of answer.toolCalls) {
    items.push({ type: 'function_call', id: nextItemId('fc'), status: 'completed', call_id: toolCall.id, name: toolCall.name, arguments: toolCall.arguments });
  }
  for (const item of items) producedItems.set(item.id, item);
  return items;
}

export function responsesBody(options: { answer: ModelAnswer; output: ResponsesOutputItem[]; requestBody: any }): object {
  const { answer } = options;
  return {
    id: answer.responseId,
    object: 'response',
    created_at: answer.createdAtSeconds,
    status: 'completed',
    background: false,
    error: null,
    incomplete_details: null,
    instructions: options.requestBody?.instructions ?? null,
    max_output_tokens: options.requestBody?.max_output_tokens ?? null,
    model: answer.model,
    output: options.output,
    parallel_tool_calls: options.requestBody?.parallel_tool_calls ?? true,
    previous_response_id: options.requestBody?.previous_response_id ?? null,
    reasoning: { effort: null, summary: null },
    store: options.requestBody?.store ?? true,
    text: { format: { type: 'text' } },
    tool_choice: options.requestBody?.tool_choice ?? 'auto',
    tools: options.requestBody?.tools ?? [],
    truncation: 'disabled',
    usage: {
      input_tokens: answer.usage.inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: answer.usage.outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: answer.usage.inputTokens + answer.usage.outputTokens,
    },
    metadata: {},
  };
}

/** The SSE events of a streamed answer, in order; each is sent as `event: <type>` + `data:`. */
export function responsesEvents(options: { answer: ModelAnswer; output: ResponsesOutputItem[]; requestBody: any }): Array<{ type: string }> {
  const completed = responsesBody(options) as Record<string, unknown>;
  const inProgress = { ...completed, status: 'in_progress', output: [], usage: null };
  const events: Array<Record<string, unknown> & { type: string }> = [
    { type: 'response.created', response: inProgress },
    { type: 'response.in_progress', response: inProgress },
  ];
  options.output.forEach((item, outputIndex) => {
    events.push(...(item.type === 'message' ? messageEvents({ item, outputIndex }) : functionCallEvents({ item, outputIndex })));
  });
  events.push({ type: 'response.completed', response: completed });
  return events.map((event, sequenceNumber) => ({ ...event, sequence_number: sequenceNumber }));
}

function messageEvents(options: { item: Extract<ResponsesOutputItem, { type: 'message' }>; outputIndex: number }) {
  const { item, outputIndex } = options;
  const text = item.content.map((part) => part.text).join('');
  const position = { item_id: item.id, output_index: outputIndex, content_index: 0 };
  return [
    { type: 'response.output_item.added', output_index: outputIndex, item: { ...item, status: 'in_progress', content: [] } },
    { type: 'response.content_part.added', ...position, part: { type: 'output_text', annotations: [], logprobs: [], text: '' } },
    ...splitIntoDeltas(text).map((delta) => ({ type: 'response.output_text.delta', ...position, delta, logprobs: [] })),
    { type: 'response.output_text.done', ...position, text, logprobs: [] },
    { type: 'response.content_part.done', ...position, part: { type: 'output_text', annotations: [], logprobs: [], text } },
    { type: 'response.output_item.done', output_index: outputIndex, item },
  ];
}

function functionCallEvents(options: { item: Extract<ResponsesOutputItem, { type: 'function_call' }>; outputIndex: number }) {
  const { item, outputIndex } = options;
  const position = { item_id: item.id, output_index: outputIndex };
  return [
    { type: 'response.output_item.added', output_index: outputIndex, item: { ...item, status: 'in_progress', arguments: '' } },
    ...splitArgumentsIntoDeltas(item.arguments).map((delta) => ({ type: 'response.function_call_arguments.delta', ...position, delta })),
    { type: 'response.function_call_arguments.done', ...position, arguments: item.arguments },
    { type: 'response.output_item.done', output_index: outputIndex, item },
  ];
}
