import type { LanguageModelV4StreamPart, LanguageModelV4Usage } from '@ai-sdk/provider';
import type { DemoReply } from './demo-reply.js';

/** Pause before each chunk of text, between `min` and `max`: enough for streaming to be seen. */
export interface ChunkDelay {
  minMs: number;
  maxMs: number;
}

/** Words per text chunk: small enough that a short answer still arrives in several pieces. */
const WORDS_PER_CHUNK = 3;

/**
 * The reply as a model stream: the text in chunks of a few words, each after a short pause (the
 * pauses vary but are the same every time), then the calls, then the finish with usage. The
 * abort signal stops it between chunks, as a network stream would stop.
 */
export function demoReplyStream({
  reply,
  usage,
  delay,
  abortSignal,
}: {
  reply: DemoReply;
  usage: LanguageModelV4Usage;
  delay: ChunkDelay;
  abortSignal?: AbortSignal | undefined;
}): ReadableStream<LanguageModelV4StreamPart> {
  const parts = replyParts(reply, usage);
  let index = 0;
  return new ReadableStream<LanguageModelV4StreamPart>({
    async pull(controller) {
      const part = parts[index];
      if (part === undefined) return controller.close();
      if (part.type === 'text-delta') await pause(delayFor(index, delay), abortSignal);
      if (abortSignal?.aborted) return controller.error(abortSignal.reason);
      index += 1;
      controller.enqueue(part);
    },
  });
}

/** The same reply as `doGenerate` content would give it, part by part. */
function replyParts(reply: DemoReply, usage: LanguageModelV4Usage): LanguageModelV4StreamPart[] {
  const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  if (reply.text !== '') {
    parts.push({ type: 'text-start', id: 'text-0' });
    for (const delta of textChunks(reply.text)) parts.push({ type: 'text-delta', id: 'text-0', delta });
    parts.push({ type: 'text-end', id: 'text-0' });
  }
  for (const call of demoToolCallParts(reply)) parts.push(call);
  parts.push({ type: 'finish', finishReason: finishReasonOf(reply), usage });
  return parts;
}

export function demoToolCallParts(reply: DemoReply): Array<Extract<LanguageModelV4StreamPart, { type: 'tool-call' }>> {
  // Unique per call: the bot keys idempotency and approvals by the call id within a thread.
  return reply.toolCalls.map((call) => ({ type: 'tool-call', toolCallId: `call_demo_${crypto.randomUUID().replaceAll('-', '')}`, toolName: call.toolName, input: JSON.stringify(call.input) }));
}

export function finishReasonOf(reply: DemoReply): Extract<LanguageModelV4StreamPart, { type: 'finish' }>['finishReason'] {
  return reply.toolCalls.length > 0 ? { unified: 'tool-calls', raw: 'tool_calls' } : { unified: 'stop', raw: 'stop' };
}

/** Chunks that join to exactly `text`, a few words each; line breaks stay inside the chunks. */
export function textChunks(text: string): string[] {
  const words = text.match(/\S+\s*|\s+/g) ?? [];
  const chunks: string[] = [];
  for (let start = 0; start < words.length; start += WORDS_PER_CHUNK) chunks.push(words.slice(start, start + WORDS_PER_CHUNK).join(''));
  return chunks;
}

function delayFor(index: number, { minMs, maxMs }: ChunkDelay): number {
  // A fixed spread rather than randomness, so two runs stream alike.
  const spread = Math.max(0, maxMs - minMs);
  return minMs + ((index * 7) % 11) * (spread / 10);
}

async function pause(milliseconds: number, abortSignal: AbortSignal | undefined): Promise<void> {
  if (milliseconds <= 0 || abortSignal?.aborted) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, milliseconds);
    function done() {
      clearTimeout(timer);
      abortSignal?.removeEventListener('abort', done);
      resolve();
    }
    abortSignal?.addEventListener('abort', done, { once: true });
  });
}
