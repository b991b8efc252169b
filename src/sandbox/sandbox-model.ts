import type { LanguageModel } from 'ai';
import { createDemoModel } from './demo-model/demo-model.js';

/**
 * The sandbox's model: with OPENAI_API_KEY the real one (createBot builds it from the environment,
 * OPENAI_BASE_URL and friends included, exactly as in Slack mode); without it the built-in
 * deterministic demo model, so the sandbox works offline. A model given by the caller wins.
 */
export function sandboxModel({ env, model }: { env: Record<string, string | undefined>; model?: LanguageModel }): { model?: LanguageModel; demo: boolean } {
  if (model) return { model, demo: false };
  if (env.OPENAI_API_KEY?.trim()) return { demo: false };
  return { model: createDemoModel(), demo: true };
}
