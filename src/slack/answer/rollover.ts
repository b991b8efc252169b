import type { CleanCut } from './clean-cuts.js';

export interface RolloverOptions {
  /** How long the message being streamed is (or, none streaming, the text the next one starts with). */
  used: number;
  /** Whether a message is streaming: one not started yet must take some of the answer. */
  streaming: boolean;
  /** Where the text not yet sent starts in the rendered answer, and where the rendered answer ends. */
  from: number;
  end: number;
  /** The answer's clean cuts at `from` or after, in order: asked for only when the message may have to end. */
  cuts: () => readonly CleanCut[];
  /** Past this length the next clean cut ends the message, while there is room to wait for one. */
  softLength: number;
  maxLength: number;
}

/**
 * How much of the text not yet sent goes into the message being streamed: all of it (`cut`
 * undefined), or up to a clean cut that ends the message; `undefined` when no message can hold the
 * text up to the next clean cut (a paragraph or list item longer than a message), and the answer
 * is shown another way.
 *
 * Text is sent as it comes, and a cut already sent can no longer be taken: a message that filled up
 * to its limit would often have no clean cut left before it. So once the text would take the
 * message past `softLength`, it ends at the first clean cut past that (the block that crosses it
 * written to its end), or else at the last one before it: the block that crosses it, still being
 * written, starts the next message, with all of its room.
 */
export function nextRollover(options: RolloverOptions): { cut?: CleanCut } | undefined {
  const { used, from, end, softLength, maxLength } = options;
  const all = used + (end - from);
  if (all <= softLength) return {};
  let last: CleanCut | undefined;
  for (const cut of options.cuts()) {
    const length = used + (cut.at - from) + cut.closing.length;
    // In order: past the limit, so are all that follow (but for a closing fence's few characters).
    if (length > maxLength) break;
    if (cut.at < from || (cut.at === from && !options.streaming)) continue;
    if (length >= softLength) return { cut };
    last = cut;
  }
  if (last !== undefined) return { cut: last };
  return all <= maxLength ? {} : undefined;
}
