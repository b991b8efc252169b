import { sliceWholeCharacters } from './limits.js';

export interface FittedText {
  /** The rendering of the longest prefix that fits, with `ellipsis` appended if anything was cut. */
  text: string;
  /** UTF-16 code units of the source left out. */
  omittedCharacters: number;
}

/**
 * Fits source text into `maxLength` *after* rendering (escaping grows `<` into `&lt;`), by cutting
 * the source rather than the rendering, so no `&amp;` is left half-written and the omitted count
 * refers to what the reader would have seen.
 */
export function fitRenderedText({
  text,
  maxLength,
  render,
  ellipsis = '…',
}: {
  text: string;
  maxLength: number;
  /** Must never make text shorter, so prefixes longer than `maxLength` need not be tried. */
  render: (source: string) => string;
  ellipsis?: string;
}): FittedText {
  if (text.length <= maxLength) {
    const whole = render(text);
    if (whole.length <= maxLength) return { text: whole, omittedCharacters: 0 };
  }
  if (ellipsis.length > maxLength) return { text: '', omittedCharacters: text.length };
  const room = Math.max(0, maxLength - ellipsis.length);
  let fitting = 0;
  let tooLong = Math.min(text.length, room + 1);
  // Binary search for the longest prefix whose rendering fits: rendering is done O(log n) times.
  while (tooLong - fitting > 1) {
    const middle = Math.floor((fitting + tooLong) / 2);
    if (render(sliceWholeCharacters(text, middle)).length <= room) fitting = middle;
    else tooLong = middle;
  }
  const kept = sliceWholeCharacters(text, fitting);
  return { text: render(kept) + ellipsis, omittedCharacters: text.length - kept.length };
}
