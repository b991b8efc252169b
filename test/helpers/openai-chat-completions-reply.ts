import { splitArgumentsIntoDeltas, splitIntoDeltas, type ModelAnswer } from './scripted-reply.js';

/**
 * Chat Completions answers shaped like api.openai.com's, field for field where @ai-sdk/openai
 * reads them (`openaiChatResponseSchema` / `openaiChatChunkSchema` in its dist).
 */
const SYSTEM_FINGERPRINT = 'fp_fake_openai';

export function chatCompletionBody(answer: ModelAnswer): object {
  return {
    id: answer.responseId,
    object: 'chat.completion',
    created: answer.createdAtSeconds,
    model: answer.model,
    system_fingerprint: SYSTEM_FINGERPRINT,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: answer.text ?? null,
          refusal: null,
          ...(answer.toolCalls.length > 0
            ? {
                tool_calls: answer.toolCalls.map((toolCall) => ({
                  id: toolCall.id,
                  type: 'function',
                  function: { name: toolCall.name, arguments: toolCall.arguments },
                })),
              }
            : {}),
        },
        logprobs: null,
        finish_reason: finishReason(answer),
      },
    ],
    usage: chatUsage(answer),
  };
}

/** The `data:` payloads of a streamed answer, in order; the caller appends `data: [DONE]`. */
export function chatCompletionChunks(options: { answer: ModelAnswer; includeUsage: boolean }): object[] {
  const { answer } = options;
  const chunk = (delta: object, extra: { finish_reason?: string | null } = {}) => ({
    id: answer.responseId,
    object: 'chat.completion.chunk',
    created: answer.createdAtSeconds,
    model: answer.model,
    system_fingerprint: SYSTEM_FINGERPRINT,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: extra.finish_reason ?? null }],
  });
  const chunks: object[] = [chunk({ role: 'assistant', content: answer.text === undefined ? null : '', refusal: null })];
  for (const textDelta of splitIntoDeltas(answer.text ?? '')) {
    chunks.push(chunk({ content: textDelta }));
  }
  answer.toolCalls.forEach((toolCall, index) => {
    chunks.push(chunk({ tool_calls: [{ index, id: toolCall.id, type: 'function', function: { name: toolCall.name, arguments: '' } }] }));
    for (const argumentsDelta of splitArgumentsIntoDeltas(toolCall.arguments)) {
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: argumentsDelta } }] }));
    }
  });
  chunks.push(chunk({}, { finish_reason: finishReason(answer) }));
  if (options.includeUsage) {
    chunks.push({
      id: answer.responseId,
      object: 'chat.completion.chunk',
      created: answer.createdAtSeconds,
      model: answer.model,
      system_fingerprint: SYSTEM_FINGERPRINT,
      choices: [],
      usage: chatUsage(answer),
    });
  }
  return chunks;
}

function finishReason(answer: ModelAnswer): string {
  return answer.toolCalls.length > 0 ? 'tool_calls' : 'stop';
}

function chatUsage(answer: ModelAnswer): object {
  return {
    prompt_tokens: answer.usage.inputTokens,
    completion_tokens: answer.usage.outputTokens,
    total_tokens: answer.usage.inputTokens + answer.usage.outputTokens,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}
