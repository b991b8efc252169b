import type { LanguageModelV4CallOptions, LanguageModelV4Content, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';

/** One model answer written the way `doGenerate` returns it, which reads better in tests. */
export interface GeneratedReply {
  content: LanguageModelV4Content[];
  finishReason: Extract<LanguageModelV4StreamPart, { type: 'finish' }>['finishReason'];
  usage: Extract<LanguageModelV4StreamPart, { type: 'finish' }>['usage'];
  warnings: Extract<LanguageModelV4StreamPart, { type: 'stream-start' }>['warnings'];
}

type ReplySource = GeneratedReply | GeneratedReply[] | ((options: LanguageModelV4CallOptions) => Promise<GeneratedReply> | GeneratedReply);

/**
 * A `MockLanguageModelV4` that streams (the bot uses `streamText`), scripted with whole replies:
 * each reply's text arrives word by word, so consumers see several deltas. Calls are recorded in
 * `doStreamCalls`.
 */
export function mockStreamingModel(source: ReplySource): MockLanguageModelV4 {
  let index = 0;
  const next = async (options: LanguageModelV4CallOptions): Promise<GeneratedReply> => {
    if (typeof source === 'function') return source(options);
    if (!Array.isArray(source)) return source;
    const reply = source[index];
    index += 1;
    if (reply === undefined) throw new Error(`mockStreamingModel: no reply scripted for call ${index}`);
    return reply;
  };
  return new MockLanguageModelV4({
    doStream: async (options) => ({ stream: convertArrayToReadableStream(streamParts(await next(options))) }),
  });
}

function streamParts(reply: GeneratedReply): LanguageModelV4StreamPart[] {
  const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: reply.warnings }];
  reply.content.forEach((content, position) => {
    if (content.type === 'text') {
      const id = `text-${position}`;
      parts.push({ type: 'text-start', id });
      for (const delta of content.text.match(/\S+\s*|\s+/g) ?? []) parts.push({ type: 'text-delta', id, delta });
      parts.push({ type: 'text-end', id });
    } else {
      parts.push(content as LanguageModelV4StreamPart);
    }
  });
  parts.push({ type: 'finish', finishReason: reply.finishReason, usage: reply.usage });
  return parts;
}
