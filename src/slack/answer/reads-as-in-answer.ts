import type { Root } from 'mdast';
import { codeNodes, endOf, parseMarkdown, startOf } from '../format/parse-markdown.js';

/** Where a text has code: the start and end of each code block and span, in order. */
export type CodeRanges = ReadonlyArray<readonly [start: number, end: number]>;

export function codeRangesOf(tree: Root): CodeRanges {
  return codeNodes(tree).map((node) => [startOf(node), endOf(node)] as const);
}

export interface ReadsAsInAnswerOptions {
  /** The code of the whole answer so far (its rendering, as sent). */
  answerCode: CodeRanges;
  /** A message of the answer: from `bodyAt`, the answer's text from `answerAt` (before it, a code block's reopening line or a list item's number). */
  message: string;
  /** `message` parsed, when the caller has it already. */
  messageTree?: Root;
  bodyAt: number;
  answerAt: number;
}

/**
 * Whether `message`, read on its own (as Slack reads each message), shows the answer's code as code
 * and its text as text, every character but whitespace. Messages start only at clean cuts, where
 * this holds by what the parser is known to do; this catches what it does otherwise (micromark
 * reads a line after an indented code block at a message's start unlike after one further on), so
 * that such a message is not sent rather than shown with code live or text as code.
 */
export function readsAsInAnswer({ answerCode, message, messageTree = parseMarkdown(message), bodyAt, answerAt }: ReadsAsInAnswerOptions): boolean {
  const inMessage = cursorOver(codeRangesOf(messageTree));
  const inAnswer = cursorOver(answerCode);
  for (let at = bodyAt; at < message.length; at++) {
    if (/\s/.test(message[at]!)) continue;
    if (inMessage(at) !== inAnswer(answerAt + at - bodyAt)) return false;
  }
  return true;
}

/** Whether offsets, asked in increasing order, are in one of `ranges`: one pass over them. */
function cursorOver(ranges: CodeRanges): (offset: number) => boolean {
  // The first range that does not end before the first offset asked, found by halves.
  let low = 0;
  let first = true;
  return (offset) => {
    if (first) {
      let high = ranges.length;
      while (low < high) {
        const middle = (low + high) >>> 1;
        if (ranges[middle]![1] <= offset) low = middle + 1;
        else high = middle;
      }
      first = false;
    }
    while (low < ranges.length && ranges[low]![1] <= offset) low++;
    return low < ranges.length && ranges[low]![0] <= offset;
  };
}
