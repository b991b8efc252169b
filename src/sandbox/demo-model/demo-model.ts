import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4Usage } from '@ai-sdk/provider';
import type { LanguageModel } from 'ai';
import { readDemoPrompt } from './demo-prompt.js';
import { planDemoReply, type DemoReply } from './demo-reply.js';
import { demoReplyStream, demoToolCallParts, finishReasonOf, type ChunkDelay } from './demo-stream.js';

export { DEMO_MODEL_NOTICE } from './demo-reply.js';

export interface DemoModelOptions {
  /** Pause before each streamed chunk of text; default 30–60 ms. Tests pass `{ minMs: 0, maxMs: 0 }`. */
  chunkDelay?: ChunkDelay;
}

const DEFAULT_CHUNK_DELAY: ChunkDelay = { minMs: 30, maxMs: 60 };

/**
 * A language model for the sandbox without OPENAI_API_KEY: deterministic, offline, and honest
 * about being a demo. It reads the request's keywords and picks among the tools the call offers
 * (see `planDemoReply`), so every approval feature can be tried without a real model.
 */
export function createDemoModel(options: DemoModelOptions = {}): LanguageModel {
  const delay = options.chunkDelay ?? DEFAULT_CHUNK_DELAY;
  const model: LanguageModelV4 = {
    specificationVersion: 'v4',
    provider: 'countersign',
    modelId: 'demo',
    supportedUrls: {},
    async doGenerate(callOptions) {
      const reply = planDemoReply(readDemoPrompt(callOptions));
      return {
        content: [...(reply.text === '' ? [] : [{ type: 'text' as const, text: reply.text }]), ...demoToolCallParts(reply)],
        finishReason: finishReasonOf(reply),
        usage: usageOf(callOptions, reply),
        warnings: [],
      };
    },
    async doStream(callOptions) {
      const reply = planDemoReply(readDemoPrompt(callOptions));
      return { stream: demoReplyStream({ reply, usage: usageOf(callOptions, reply), delay, abortSignal: callOptions.abortSignal }) };
    },
  };
  return model;
}

/** Token counts estimated the usual way (about four characters a token), so usage reports look real. */
function usageOf(callOptions: LanguageModelV4CallOptions, reply: DemoReply): LanguageModelV4Usage {
  const inputTokens = estimateTokens(JSON.stringify(callOptions.prompt) + JSON.stringify(callOptions.tools ?? []));
  const outputTokens = estimateTokens(reply.text + JSON.stringify(reply.toolCalls));
  return {
    inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: outputTokens, text: outputTokens, reasoning: 0 },
  };
}

function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
