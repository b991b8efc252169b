import { createOpenAI } from '@ai-sdk/openai';
import type { LanguageModel } from 'ai';
import { sharedLeanFetch } from '../http/lean-fetch.js';

export interface LanguageModelSettings {
  apiKey: string;
  baseUrl?: string;
  model: string;
  /** `chat` for OpenAI-compatible servers that lack the Responses API (vLLM, Ollama, LiteLLM). */
  api: 'responses' | 'chat';
}

export function createLanguageModel(settings: LanguageModelSettings): LanguageModel {
  const provider = createOpenAI({
    apiKey: settings.apiKey,
    fetch: sharedLeanFetch(),
    ...(settings.baseUrl === undefined ? {} : { baseURL: settings.baseUrl }),
  });
  return settings.api === 'chat' ? provider.chat(settings.model) : provider.responses(settings.model);
}
