import type { Code, Nodes, Root } from 'mdast';
import { endOf, fenceOf, parseMarkdown, startOf } from '../format/parse-markdown.js';

/**
 * A line start of a rendered answer where it can go on in a new message that, read on its own (as
 * Slack reads each message), reads as the same blocks as in the whole answer: the code in it code,
 * its text text. Patching text cut anywhere else (reopening a code block in its list item or quote,
 * with its indentation, a longer fence, the rest of a cut line…) kept turning up corner cases where
 * code went live or text turned into code, so the answer is cut only here.
 */
export interface CleanCut {
  /** Offset in the rendered answer: the next message starts with the text from here. */
  at: number;
  /** Text that ends the message before the cut (after its last line break): a code block's own fence, or nothing. */
  closing: string;
  /** Text that starts the next message, before the text from `at`: that block's opening line again, or nothing. */
  reopening: string;
}

/**
 * The clean cuts of `rendered` (the answer so far, as sent) in a window, from `from` up to `to`,
 * with text after them, in order. Read from the parser's tree of the answer so far (`tree`), the
 * text not yet sent included, so that a line that merges with the block before it (a lazy
 * continuation line of a quote, a setext underline) is never taken for the start of a block of its
 * own. Only these:
 * - the start of a top-level block (a child of the root): nothing before it is open there (the
 *   parser has closed every container), and the block's own line starts nowhere but at the root;
 * - the start of an item of a top-level list, other than its first: the next message starts with
 *   the item's own marker, a list of its own there (an ordered one starting at the item's number),
 *   the item's content column set by that marker line as before;
 * - a line start inside a top-level fenced code block (see `codeLineCuts`).
 * A cut right after a link reference definition is none: a title may follow on the next lines
 * (`"…"`), which until it is closed reads as a paragraph of its own. Nor is one where the block
 * after it reads otherwise on its own (see `readsTheSameAlone`): each block a cut would start is
 * parsed again, so only those in the window are (past a message's length none can be taken).
 */
export function cleanCutsOf({ rendered, tree }: { rendered: string; tree: Root }): (window: { from: number; to: number }) => CleanCut[] {
  const contentEnd = rendered.trimEnd().length;
  return ({ from, to }) => {
    const end = Math.min(contentEnd, to + 1);
    const inWindow = (at: number) => at >= from && at < end;
    const cuts: CleanCut[] = [];
    const add = (node: Nodes, previous: Nodes) => {
      if (!inWindow(lineStartOf(rendered, node))) return;
      const at = cleanCutBefore(rendered, node, previous);
      if (at !== undefined) cuts.push({ at, closing: '', reopening: '' });
    };
    let previous: Nodes | undefined;
    for (const block of tree.children) {
      if (lineStartOf(rendered, block) >= end) break;
      if (previous !== undefined && previous.type !== 'definition') add(block, previous);
      // Blocks that end before `from` have no cut of their own.
      if (endOf(block) >= from) {
        if (block.type === 'list') for (const [index, item] of block.children.entries()) if (index > 0) add(item, block.children[index - 1]!);
        if (block.type === 'code') cuts.push(...codeLineCuts(rendered, block, { from, end }));
      }
      previous = block;
    }
    return cuts;
  };
}

const lineStartOf = (source: string, node: Nodes) => source.lastIndexOf('\n', startOf(node) - 1) + 1;

/**
 * Where the line `node` starts on begins, if only indentation stands before it there, `previous`
 * ends before that line, and `node` read on its own reads as it does after `previous` (see
 * `readsTheSameAlone`): the next message then starts with `node`'s whole first line.
 */
function cleanCutBefore(source: string, node: Nodes, previous: Nodes): number | undefined {
  const lineStart = lineStartOf(source, node);
  if (lineStart < endOf(previous) || !/^[ \t]*$/.test(source.slice(lineStart, startOf(node)))) return undefined;
  return readsTheSameAlone(source, node, lineStart) ? lineStart : undefined;
}

/** Blocks, as opposed to the inline content of a paragraph or heading. */
const BLOCKS = new Set(['blockquote', 'code', 'definition', 'footnoteDefinition', 'heading', 'html', 'list', 'listItem', 'paragraph', 'table', 'thematicBreak']);

/** The blocks in `node` (itself included), each as its type and where it stands from `origin`. */
function blocksOf(node: Nodes, origin: number): string[] {
  if (!BLOCKS.has(node.type)) return [];
  const children = 'children' in node ? node.children.flatMap((child: Nodes) => blocksOf(child, origin)) : [];
  return [`${node.type}@${startOf(node) - origin}-${endOf(node) - origin}`, ...children];
}

/**
 * Whether the text of `node` (a top-level block or list item, from its line start), parsed on its
 * own, reads as the same blocks as it does in the whole answer. Its first line can read otherwise
 * after what came before: the parser reads a line after a paragraph's text (micromark also one
 * after an indented code block) as interrupting it, which some blocks cannot do, down to the
 * containers the line opens (`10) x` is no list there, `- 10) x` no list in a list). A list item
 * is read as a list of its own, as it will be in the next message.
 */
function readsTheSameAlone(source: string, node: Nodes, lineStart: number): boolean {
  const alone = parseMarkdown(source.slice(lineStart, endOf(node))).children.flatMap((child) => blocksOf(child, 0));
  const inContext = blocksOf(node, lineStart);
  if (node.type === 'listItem') inContext.unshift(`list@0-${endOf(node) - lineStart}`);
  return alone.length === inContext.length && alone.every((block, index) => block === inContext[index]);
}

/**
 * Line starts inside a top-level fenced code block, with a line of code before them and one after
 * (the closing fence not counted): the message is closed with the block's own fence, and the next
 * reopens it with the block's own opening line (its indentation, fence and info string). At the
 * top level nothing but that fence is around the block, so the reopened block reads its lines as
 * the whole answer does (the same indentation taken off), and the first line that closes it is the
 * one that closes the block in the whole answer: a line closing a fence closes it whatever came
 * before the fence. A block in a list item or a quote is never cut: its container would have to
 * be rebuilt in the next message, which is where the corner cases were. Nor is an indented one.
 */
function codeLineCuts(source: string, block: Code, { from, end }: { from: number; end: number }): CleanCut[] {
  const fenced = fenceOf(source, block);
  const openingLineEnd = source.indexOf('\n', startOf(block));
  if (fenced === undefined || openingLineEnd === -1 || openingLineEnd >= endOf(block)) return [];
  const reopening = source.slice(source.lastIndexOf('\n', startOf(block) - 1) + 1, openingLineEnd + 1);
  const codeEnd = Math.min(fenced.closed ? source.lastIndexOf('\n', endOf(block) - 1) + 1 : endOf(block), end);
  const cuts: CleanCut[] = [];
  // From the first line start at or after `from` that has a line of code before it.
  for (let at = source.indexOf('\n', Math.max(openingLineEnd + 1, from - 1)) + 1; at > 0 && at < codeEnd; at = source.indexOf('\n', at) + 1) {
    cuts.push({ at, closing: fenced.fence, reopening });
  }
  return cuts;
}
