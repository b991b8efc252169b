import { SLACK_LIMITS } from '../blocks/limits.js';

const FENCE = '```';
const CLOSING_FENCE = `\n${FENCE}`;
const REOPENING_FENCE = `${FENCE}\n`;
/** Below this a chunk cannot hold a reopened and a closed fence plus some text. */
const MIN_MAX_LENGTH = 16;
/** `<link|label>`, `<@U…>`, `&amp;` and fences: cutting inside one breaks its rendering. */
const UNCUTTABLE = /<[^<>\n]*>|&(?:amp|lt|gt);|`{3}/g;
/** Unsplittable tokens are looked for this far past the cut, so long text costs linear time. */
const LOOKAHEAD = 4000;
/**
 * A ping word made by a cut: each message starts and ends a word, so `x@here` cut before its `@`
 * starts the next message with a bare `@here`, and `@herex` cut after `@here` ends one with it. The
 * formatter defuses the words the whole text has; these it could not see.
 */
const PING_WORD_AFTER_CUT = /^@(?:channel|here|everyone)(?![\p{L}\p{N}])/iu;
const PING_WORD_BEFORE_CUT = /@(?:channel|here|everyone)$/iu;
const LONGEST_PING_WORD = '@everyone'.length;
/** What joins a ping word to the text around it, as the formatter reads it (`neutralise-pings.ts`). */
const WORD_END = /[\p{L}\p{N}]$/u;
const WORD_START = /^[\p{L}\p{N}]/u;

/**
 * Splits mrkdwn into messages of at most `maxLength` characters, cutting between paragraphs,
 * else lines, else words, and only mid-word when a word is longer than a message. A cut inside
 * a ``` block closes the block and reopens it in the next chunk. Never cuts a surrogate pair,
 * a `<…>` sequence or an `&amp;` entity, nor next to `@here` (`@channel`, `@everyone`) where the
 * cut would make it a word of its own. Never returns a chunk of only whitespace and fences;
 * whitespace-only text gives no chunks.
 */
export function splitMessage(text: string, { maxLength = SLACK_LIMITS.messageTextLength }: { maxLength?: number } = {}): string[] {
  if (!Number.isInteger(maxLength) || maxLength < MIN_MAX_LENGTH) {
    throw new RangeError(`maxLength must be an integer of at least ${MIN_MAX_LENGTH}, got ${maxLength}`);
  }
  if (text.trim() === '') return [];
  if (text.length <= maxLength) return [text];

  const chunks: string[] = [];
  let rest = text;
  let insideCode = false;
  while (rest.trim() !== '') {
    const reopening = insideCode ? REOPENING_FENCE : '';
    if (reopening.length + rest.length <= maxLength) {
      if (hasContent(rest)) chunks.push(reopening + rest);
      break;
    }
    // Room for a closing fence is only taken from chunks that end inside a code block.
    let cut = chooseCut({ text: rest, room: maxLength - reopening.length, insideCode });
    if (endsInsideCode(rest.slice(0, cut.end), insideCode)) {
      cut = chooseCut({ text: rest, room: maxLength - reopening.length - CLOSING_FENCE.length, insideCode });
    }
    const { end, resume } = cut;
    const head = rest.slice(0, end).trimEnd();
    const closing = endsInsideCode(head, insideCode);
    if (hasContent(head)) chunks.push(reopening + head + (closing ? CLOSING_FENCE : ''));
    rest = rest.slice(resume).replace(/^\n+/, '');
    insideCode = closing;
    // The block's own closing fence is next: the fence just added already closed it.
    if (insideCode && rest.startsWith(FENCE)) {
      rest = rest.slice(FENCE.length).replace(/^[ \t]*\n+/, '');
      insideCode = false;
    }
  }
  return chunks;
}

interface Cut {
  /** The chunk is `text.slice(0, end)`. */
  end: number;
  /** The next chunk starts here; past `end` when the separator itself is dropped. */
  resume: number;
}

function chooseCut({ text, room, insideCode }: { text: string; room: number; insideCode: boolean }): Cut {
  const uncuttable = [...text.slice(0, room + LOOKAHEAD).matchAll(UNCUTTABLE)].map((match) => ({
    start: match.index,
    end: match.index + match[0].length,
  }));
  const canCutAt = (position: number): boolean => {
    if (position <= 0 || position > room) return false;
    if (isHighSurrogate(text.charCodeAt(position - 1))) return false;
    if (uncuttable.some((token) => token.start < position && position < token.end)) return false;
    if (makesPingWord(text, position)) return false;
    // A chunk ending on the fence that opens a block would be an empty code block.
    let headEnd = position;
    while (headEnd > 0 && /\s/.test(text.charAt(headEnd - 1))) headEnd--;
    if (headEnd < FENCE.length || text.slice(headEnd - FENCE.length, headEnd) !== FENCE) return true;
    return !endsInsideCode(text.slice(0, headEnd), insideCode);
  };
  // A boundary in the first half would waste most of the message: cut mid-word in the second half
  // rather than there, unless the second half is one unsplittable token.
  for (const lowest of [Math.floor(room / 2), 1]) {
    for (const separator of ['\n\n', '\n', ' ']) {
      for (let position = text.lastIndexOf(separator, room); position >= lowest; position = text.lastIndexOf(separator, position - 1)) {
        if (canCutAt(position)) return { end: position, resume: position + separator.length };
      }
    }
    for (let position = room; position >= lowest; position--) {
      if (canCutAt(position)) return { end: position, resume: position };
    }
  }
  // Only a token longer than the message gets here: cut through it rather than never finish.
  const position = isHighSurrogate(text.charCodeAt(room - 1)) ? room - 1 : room;
  return { end: position, resume: position };
}

function makesPingWord(text: string, position: number): boolean {
  const before = text.slice(Math.max(0, position - LONGEST_PING_WORD), position);
  const after = text.slice(position, position + LONGEST_PING_WORD + 1);
  return (WORD_END.test(before) && PING_WORD_AFTER_CUT.test(after)) || (PING_WORD_BEFORE_CUT.test(before) && WORD_START.test(after));
}

/** A piece holding nothing but fences and whitespace would post as an empty message. */
function hasContent(piece: string): boolean {
  return piece.replaceAll(FENCE, '').trim() !== '';
}

/** Whether a chunk starting inside (or outside) a code block ends inside one. */
function endsInsideCode(chunk: string, startsInsideCode: boolean): boolean {
  return startsInsideCode !== ((chunk.split(FENCE).length - 1) % 2 === 1);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
