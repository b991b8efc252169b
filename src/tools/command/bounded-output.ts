import { StringDecoder } from 'node:string_decoder';

/**
 * Collects a stream's text in bounded memory: the first half of `limit` characters and a rolling
 * window of the last half. Both ends matter for commands: the head says what ran, the tail
 * usually holds the error. Whatever is in between is counted, not kept, so a command that
 * prints gigabytes cannot exhaust the bot's memory.
 */
export interface BoundedOutput {
  write(chunk: Buffer | string): void;
  /** The collected text, with a marker saying how many characters were dropped, if any. */
  finish(): { text: string; truncated: boolean };
}

export function createBoundedOutput(limit: number): BoundedOutput {
  const headLimit = Math.ceil(limit / 2);
  const tailLimit = limit - headLimit;
  const decoder = new StringDecoder('utf8');
  let head = '';
  let tail = '';
  let total = 0;

  const append = (text: string) => {
    total += text.length;
    const headRoom = headLimit - head.length;
    if (headRoom > 0) {
      head += text.slice(0, headRoom);
      text = text.slice(headRoom);
    }
    if (text !== '' && tailLimit > 0) tail = (tail + text).slice(-tailLimit);
  };

  return {
    write(chunk) {
      // The decoder holds back a multi-byte character split across chunks instead of mangling it.
      append(typeof chunk === 'string' ? chunk : decoder.write(chunk));
    },
    finish() {
      append(decoder.end());
      const dropped = total - head.length - tail.length;
      if (dropped <= 0) return { text: head + tail, truncated: false };
      return { text: `${head}\n… [${dropped} characters dropped] …\n${tail}`, truncated: true };
    },
  };
}
