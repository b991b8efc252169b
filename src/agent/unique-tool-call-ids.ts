import { randomBytes } from 'node:crypto';
import type { LanguageModelV4Prompt, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { wrapLanguageModel, type LanguageModel, type LanguageModelMiddleware } from 'ai';

/**
 * Gives every tool call the model makes an id no other call of the thread has, before the AI SDK
 * sees it. Some OpenAI-compatible servers number calls per response (`call_1` in every response,
 * or twice in one): the SDK matches an approval to its call by id, and the bot's approvals,
 * executing markers, idempotency keys and history all go by id, so two calls sharing one could run
 * one under the other's approval, or pair a result with the wrong call. A repeated id is replaced
 * here, so everything after (cards, approvals, the stored history, what the server is sent back)
 * only ever sees the unique one. A gateway model id (a string) cannot be wrapped and is left as is.
 * `freshIds`: the prompt no longer holds every id the thread used (its history was trimmed), so
 * every call gets a fresh id, not only one the prompt repeats.
 */
export function withUniqueToolCallIds(model: LanguageModel, options: { freshIds?: boolean } = {}): LanguageModel {
  if (typeof model === 'string') return model;
  return wrapLanguageModel({ model, middleware: uniqueToolCallIds(options.freshIds ?? false) });
}

function uniqueToolCallIds(freshIds: boolean): LanguageModelMiddleware {
  return {
    wrapStream: async ({ doStream, params }) => {
      const result = await doStream();
      const rename = createRenamer(toolCallIdsOf(params.prompt), freshIds);
      return { ...result, stream: result.stream.pipeThrough(new TransformStream({ transform: (part, controller) => controller.enqueue(rename(part)) })) };
    },
  };
}

/**
 * Renames within one response. The calls a provider streams are announced (`tool-input-start`)
 * and completed (`tool-call`) in the same order, so the n-th completion of a repeated id is the
 * n-th announcement. Provider-executed calls keep their ids: the provider pairs their results.
 */
function createRenamer(used: Set<string>, freshIds: boolean): (part: LanguageModelV4StreamPart) => LanguageModelV4StreamPart {
  const streaming = new Map<string, string>();
  const announced = new Map<string, string[]>();
  const fresh = () => `call_${randomBytes(12).toString('hex')}`;
  const claim = (id: string): string => {
    let unique = freshIds ? fresh() : id;
    while (used.has(unique)) unique = fresh();
    used.add(unique);
    return unique;
  };
  return (part) => {
    if (part.type === 'tool-input-start') {
      if (part.providerExecuted) return part;
      const id = claim(part.id);
      streaming.set(part.id, id);
      announced.set(part.id, [...(announced.get(part.id) ?? []), id]);
      return { ...part, id };
    }
    if (part.type === 'tool-input-delta' || part.type === 'tool-input-end') return { ...part, id: streaming.get(part.id) ?? part.id };
    if (part.type === 'tool-call' && !part.providerExecuted) {
      const id = announced.get(part.toolCallId)?.shift() ?? claim(part.toolCallId);
      return { ...part, toolCallId: id };
    }
    return part;
  };
}

function toolCallIdsOf(prompt: LanguageModelV4Prompt): Set<string> {
  const ids = new Set<string>();
  for (const message of prompt) {
    if (message.role !== 'assistant' && message.role !== 'tool') continue;
    for (const part of message.content) if (part.type === 'tool-call' || part.type === 'tool-result') ids.add(part.toolCallId);
  }
  return ids;
}
