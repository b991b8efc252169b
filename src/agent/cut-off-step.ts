import type { AssistantModelMessage, FinishReason, ModelMessage, ToolContent } from 'ai';

/**
 * The AI SDK runs a step's tools only when the model ended the step with one of these (its
 * `isToolExecutionAllowedFinishReason`); its approval gate, though, judges every call as it
 * streams in. A step ended any other way (`length` at the output limit, `content-filter`,
 * `other`, …) while calling tools is cut off: none of its calls runs, and none gets a result.
 */
const TOOL_RUNNING_FINISH_REASONS: ReadonlySet<FinishReason> = new Set<FinishReason>(['stop', 'tool-calls']);

/** What the model is told of a call of a cut-off step: it may well ask for it again. */
export function cutOffCallText(finishReason: FinishReason): string {
  return `Not run: the model's response was cut off (finish reason ${finishReason}) before this call could run.`;
}

/**
 * Whether a step the model ended this way, having called `callCount` tools, is cut off. Asked of the
 * step's own stream parts: the history cannot tell, as a silent last step leaves no message and
 * the step before it (whose calls ran) would be taken for it.
 */
export function isCutOffStep(options: { finishReason: FinishReason; callCount: number }): boolean {
  return options.callCount > 0 && !TOOL_RUNNING_FINISH_REASONS.has(options.finishReason);
}

/**
 * Finish reasons of a model that did not finish what it was writing: its output limit, a stream that
 * ended with no finish (`interrupted`, as @ai-sdk/openai reports it), an error.
 */
const UNFINISHED_FINISH_REASONS: ReadonlySet<FinishReason> = new Set<FinishReason>(['length', 'interrupted', 'error']);

/** The step's finish as the AI SDK reports it (`finish-step`): unified, and as the server sent it. */
interface StepFinish {
  finishReason: FinishReason;
  /** Undefined when the server sent none (or a refusal in the Responses API, which has no reason of its own). */
  rawFinishReason: string | undefined;
}

/**
 * The raw finish reasons of OpenAI-compatible servers that mean the model ended its answer itself,
 * which @ai-sdk/openai reports as `other` (it maps only OpenAI's own reasons): Together's `eos`,
 * Hugging Face TGI's `eos_token` and `stop_sequence`, and Anthropic's `end_turn` (and
 * `stop_sequence`) that some gateways pass through as they are; `stop` in any case. vLLM, Ollama,
 * llama.cpp, Mistral and DeepSeek end an answer with `stop`. The same servers report their own
 * cut-offs as `other` too (Mistral's `model_length` and `error`, DeepSeek's
 * `insufficient_system_resource`, vLLM's `abort`), and so would a server's next new one: a reason
 * not listed here is taken for a cut-off, since a whole answer marked cut off only costs a Try
 * again, while half an answer shown as whole misleads and stays in the history as said.
 */
const MODEL_END_RAW_FINISH_REASONS: ReadonlySet<string> = new Set(['stop', 'eos', 'eos_token', 'stop_sequence', 'end_turn']);

/**
 * Whether a last step that called no tools but wrote text was cut off mid-answer. Its text is only
 * the start of an answer, and shown as the answer it would read as a whole one. An unfinished finish
 * reason is a cut-off, and so is `other` unless the server's raw reason is a known end of an answer
 * (`MODEL_END_RAW_FINISH_REASONS`): with no reason at all, it is what the AI SDK reports for a stream
 * that ended with no finish. Every other end is the model's own: `stop`; `content-filter` for a
 * refusal (@ai-sdk/openai reports a whole refusal so); and a content filter that stopped the answer
 * (see `isFilteredAnswer`).
 */
export function isCutOffAnswer(options: StepFinish & { callCount: number; hasText: boolean }): boolean {
  if (options.callCount > 0 || !options.hasText) return false;
  if (UNFINISHED_FINISH_REASONS.has(options.finishReason)) return true;
  return options.finishReason === 'other' && !MODEL_END_RAW_FINISH_REASONS.has(options.rawFinishReason ?? '');
}

/**
 * Whether a provider's content filter stopped the answer as it was written (`content_filter` from
 * the server, in Chat Completions and the Responses API alike), not the model refusing in a whole
 * answer (`content-filter` with `stop`, or with no reason). The model did end it, and asking again
 * meets the same filter: it is its answer, with a note that the filter ended it there.
 */
export function isFilteredAnswer(options: StepFinish & { callCount: number; hasText: boolean }): boolean {
  return options.callCount === 0 && options.hasText && options.finishReason === 'content-filter' && options.rawFinishReason === 'content_filter';
}

/**
 * The turn's messages without its cut-off answer (its last assistant message): Try again asks the
 * model again only from a history that ends with a user or tool message, and a half answer sent
 * back would be taken for one the model gave. The steps before it, whose calls ran, stay.
 */
export function withoutCutOffAnswer(responseMessages: readonly ModelMessage[]): ModelMessage[] {
  return responseMessages.at(-1)?.role === 'assistant' ? responseMessages.slice(0, -1) : [...responseMessages];
}

/**
 * The turn's messages with its cut-off last step (its last assistant message) closed, so the
 * history can be sent again: every call of the step without a result is answered "not run" (one
 * the AI SDK already answered, such as a call whose arguments were cut mid-JSON, keeps its answer),
 * in the step's tool message, and the approval requests in `droppedApprovalIds` are taken out. Nobody is asked about a call whose
 * siblings never ran, and a request left without its response would read as still waiting.
 */
export function closeCutOffStep(options: { responseMessages: readonly ModelMessage[]; finishReason: FinishReason; droppedApprovalIds: ReadonlySet<string> }): ModelMessage[] {
  const stepIndex = options.responseMessages.findLastIndex((message) => message.role === 'assistant');
  const step = options.responseMessages[stepIndex] as AssistantModelMessage;
  const after = options.responseMessages.slice(stepIndex + 1);
  const answered = new Set(after.flatMap((message) => (message.role === 'tool' ? message.content.flatMap((part) => (part.type === 'tool-result' ? [part.toolCallId] : [])) : [])));
  const notRun: ToolContent = callsOf(step)
    .filter((call) => !call.providerExecuted && !answered.has(call.toolCallId))
    .map((call) => ({ type: 'tool-result', toolCallId: call.toolCallId, toolName: call.toolName, output: { type: 'execution-denied', reason: cutOffCallText(options.finishReason) } }));
  const kept: AssistantModelMessage =
    typeof step.content === 'string'
      ? step
      : { ...step, content: step.content.filter((part) => part.type !== 'tool-approval-request' || !options.droppedApprovalIds.has(part.approvalId)) };
  // Only tool messages follow a step's assistant message. One closes the step: the results the AI
  // SDK wrote (and any approval response the gate gave itself, which must stay in the last message
  // beside its call's result), then these.
  const content: ToolContent = [...after.flatMap((message) => (message.role === 'tool' ? message.content : [])), ...notRun];
  return [...options.responseMessages.slice(0, stepIndex), kept, { role: 'tool', content }];
}

function callsOf(message: AssistantModelMessage) {
  return typeof message.content === 'string' ? [] : message.content.flatMap((part) => (part.type === 'tool-call' ? [part] : []));
}
