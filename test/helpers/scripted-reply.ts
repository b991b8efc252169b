/** What the fake model answers to one request, written by the test. */
export type ScriptedReply =
  /** `deltaDelayMs`: a streamed answer arrives word by word with this pause between words. */
  | { text: string; deltaDelayMs?: number }
  | { toolCalls: Array<{ name: string; arguments: Record<string, unknown> | string; id?: string }>; text?: string; deltaDelayMs?: number }
  | { error: { status: number; message?: string } }
  | { hang: true }
  /** The connection is closed without an answer, as by a reset or a crashed proxy. */
  | { drop: true };

export interface ResolvedToolCall {
  id: string;
  name: string;
  /** Exactly what the model sends: a JSON string (or the raw string the test gave). */
  arguments: string;
}

/** A successful answer, independent of which OpenAI API it is rendered for. */
export interface ModelAnswer {
  responseId: string;
  model: string;
  createdAtSeconds: number;
  text: string | undefined;
  toolCalls: ResolvedToolCall[];
  usage: { inputTokens: number; outputTokens: number };
}

export function resolveToolCalls(options: { reply: ScriptedReply; nextToolCallId: () => string }): ResolvedToolCall[] {
  if (!('toolCalls' in options.reply)) return [];
  return options.reply.toolCalls.map((toolCall) => ({
    id: toolCall.id ?? options.nextToolCallId(),
    name: toolCall.name,
    arguments: typeof toolCall.arguments === 'string' ? toolCall.arguments : JSON.stringify(toolCall.arguments),
  }));
}

export function replyText(reply: ScriptedReply): string | undefined {
  return 'text' in reply ? reply.text : undefined;
}

/** Roughly 4 characters per token: deterministic, and close enough for budget/logging code paths. */
export function estimateTokens(value: unknown): number {
  const characters = typeof value === 'string' ? value.length : (JSON.stringify(value) ?? '').length;
  return Math.max(1, Math.ceil(characters / 4));
}

/** Streams deliver text word by word so consumers see several deltas; joined, they equal the text. */
export function splitIntoDeltas(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

const ARGUMENT_DELTA_CHARACTERS = 16;

/** Tool arguments arrive in fragments, as from the real API, so the SDK's accumulation is exercised. */
export function splitArgumentsIntoDeltas(argumentsJson: string): string[] {
  const parts: string[] = [];
  for (let start = 0; start < argumentsJson.length; start += ARGUMENT_DELTA_CHARACTERS) {
    parts.push(argumentsJson.slice(start, start + ARGUMENT_DELTA_CHARACTERS));
  }
  return parts;
}
