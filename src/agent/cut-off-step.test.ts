import type { FinishReason } from 'ai';
import { describe, expect, it } from 'vitest';
import { isCutOffAnswer, isFilteredAnswer } from './cut-off-step.js';

describe('how a last step that wrote text and called no tools ended', () => {
  const answer = { callCount: 0, hasText: true };
  it.each<[string, FinishReason, string | undefined, 'cut off' | 'filtered' | 'whole']>([
    ['at its output limit (Chat Completions)', 'length', 'length', 'cut off'],
    ['at its output limit (Responses API)', 'length', 'max_output_tokens', 'cut off'],
    // @ai-sdk/openai's own report of a stream with no finish_reason, or no response.completed.
    ['a stream that ended with no finish', 'interrupted', undefined, 'cut off'],
    // The AI SDK's default for a step whose model stream sent no finish at all.
    ['no finish from the provider at all', 'other', undefined, 'cut off'],
    ['an error', 'error', 'error', 'cut off'],
    ['stop', 'stop', 'stop', 'whole'],
    // Whole refusals: @ai-sdk/openai reports them as content-filter.
    ['a refusal (Chat Completions)', 'content-filter', 'stop', 'whole'],
    ['a refusal (Responses API)', 'content-filter', undefined, 'whole'],
    // An OpenAI-compatible server's own end of an answer.
    ['eos (Together)', 'other', 'eos', 'whole'],
    ['eos_token (TGI)', 'other', 'eos_token', 'whole'],
    ['stop_sequence (TGI)', 'other', 'stop_sequence', 'whole'],
    ['end_turn (Anthropic, through a gateway)', 'other', 'end_turn', 'whole'],
    // An OpenAI-compatible server's own cut-off, and a reason nobody has listed yet.
    ['model_length (Mistral: the context is full)', 'other', 'model_length', 'cut off'],
    ['error (Mistral)', 'other', 'error', 'cut off'],
    ['insufficient_system_resource (DeepSeek)', 'other', 'insufficient_system_resource', 'cut off'],
    ['abort (vLLM)', 'other', 'abort', 'cut off'],
    ['a reason of its own', 'other', 'unheard_of', 'cut off'],
    // The Responses API: an incomplete response for a reason other than its output limit or a filter.
    ['incomplete for another reason (Responses API)', 'other', 'server_shutdown', 'cut off'],
    ['a content filter that stopped the answer', 'content-filter', 'content_filter', 'filtered'],
  ])('%s', (_name, finishReason, rawFinishReason, expected) => {
    const step = { ...answer, finishReason, rawFinishReason };
    expect(isCutOffAnswer(step) ? 'cut off' : isFilteredAnswer(step) ? 'filtered' : 'whole').toBe(expected);
  });

  it('is neither cut off nor filtered without text, or with calls (a cut-off step of calls is judged apart)', () => {
    for (const shape of [
      { callCount: 0, hasText: false },
      { callCount: 1, hasText: true },
    ]) {
      for (const [finishReason, rawFinishReason] of [
        ['length', 'length'],
        ['interrupted', undefined],
        ['content-filter', 'content_filter'],
      ] as const) {
        expect(isCutOffAnswer({ ...shape, finishReason, rawFinishReason })).toBe(false);
        expect(isFilteredAnswer({ ...shape, finishReason, rawFinishReason })).toBe(false);
      }
    }
  });
});
