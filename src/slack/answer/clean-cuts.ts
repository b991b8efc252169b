import type { Code, List, ListItem, Nodes, Root } from 'mdast';
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
  /**
   * Text that starts the next message, before the text from `resume`: a code block's opening line
   * again, an ordered list item's number in the whole answer in place of the one written, or nothing.
   */
  reopening: string;
  /** Offset in the rendered answer the next message goes on from after `reopening`: `at`, or past the item's written number. */
  resume: number;
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
 *   the item's own marker, a list of its own there, the item's content column set by that marker
 *   line as before. An ordered list there starts at the number written, where CommonMark numbers
 *   an item by its list's start and its place in it (a list written all `1.` reads 1, 2, 3): the
 *   written number is replaced by the one the item shows in the whole answer (see `renumbering`);
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
    const add = (node: Nodes, previous: Nodes, shownNumber?: number) => {
      if (!inWindow(lineStartOf(rendered, node))) return;
      const cut = cleanCutBefore(rendered, node, previous, shownNumber);
      if (cut !== undefined) cuts.push(cut);
    };
    let previous: Nodes | undefined;
    for (const block of tree.children) {
      if (lineStartOf(rendered, block) >= end) break;
      if (previous !== undefined && previous.type !== 'definition') add(block, previous);
      // Blocks that end before `from` have no cut of their own.
      if (endOf(block) >= from) {
        if (block.type === 'list') for (const [index, item] of block.children.entries()) if (index > 0) add(item, block.children[index - 1]!, shownNumberOf(block, index));
        if (block.type === 'code') cuts.push(...codeLineCuts(rendered, block, { from, end }));
      }
      previous = block;
    }
    return cuts;
  };
}

const lineStartOf = (source: string, node: Nodes) => source.lastIndexOf('\n', startOf(node) - 1) + 1;

/** The number CommonMark shows before the item at `index` of `list`; `undefined` for a bullet list. */
const shownNumberOf = (list: List, index: number) => (list.ordered ? (list.start ?? 1) + index : undefined);

/**
 * A cut where the line `node` starts on begins, if only indentation stands before it there,
 * `previous` ends before that line, and `node` read on its own (an ordered list item with the
 * number it shows, see `renumbering`) reads as it does after `previous` (see `readsTheSameAlone`):
 * the next message then starts with `node`'s whole first line.
 */
function cleanCutBefore(source: string, node: Nodes, previous: Nodes, shownNumber?: number): CleanCut | undefined {
  const lineStart = lineStartOf(source, node);
  if (lineStart < endOf(previous) || !/^[ \t]*$/.test(source.slice(lineStart, startOf(node)))) return undefined;
  const start = shownNumber === undefined ? { reopening: '', resume: lineStart } : renumbering(source, node as ListItem, lineStart, shownNumber);
  if (start === undefined || !readsTheSameAlone(source, node, start)) return undefined;
  return { at: lineStart, closing: '', ...start };
}

/** An ordered list item's line up to its number's delimiter: its indentation, number and delimiter. */
const ORDERED_MARKER = /^( {0,3})(\d{1,9})([.)])/;

/**
 * How a message starting at an ordered list item's line start (`lineStart`) shows the number the
 * item has in the whole answer, `shown`: the written number, indentation before it included,
 * replaced by that number with the same delimiter, padded with spaces to the written width where it
 * fits, so that the item's content column (where the indentation of its other lines puts them)
 * stays as written. A wider number moves that column, and a line of the item at the written column
 * (a second paragraph) falls out of it read on its own: the item is read alone as rewritten (see
 * `readsTheSameAlone`), and again as it grows (see `renumberedItemReadsTheSame`). `undefined` when
 * nothing follows the marker in the item (the message would start with the marker alone).
 */
function renumbering(source: string, item: ListItem, lineStart: number, shown: number): { reopening: string; resume: number } | undefined {
  const written = ORDERED_MARKER.exec(source.slice(lineStart, endOf(item)));
  if (written === null) return undefined;
  const [marker, indentation = '', digits = '', delimiter = ''] = written;
  if (Number(digits) === shown) return { reopening: '', resume: lineStart };
  const resume = lineStart + marker.length;
  if (!/\S/.test(source.slice(resume, endOf(item)))) return undefined;
  return { reopening: String(shown).padStart(indentation.length + digits.length) + delimiter, resume };
}

/**
 * Whether the ordered list item a message started with at `cut`, its number rewritten (`resume`
 * past `at`), still reads on its own as in the whole answer so far: the item was read so when the
 * cut was taken, with the lines it had then, and the message takes its lines as they come.
 */
export function renumberedItemReadsTheSame({ rendered, tree, cut }: { rendered: string; tree: Root; cut: CleanCut }): boolean {
  for (const block of tree.children) {
    const item = block.type === 'list' ? block.children.find((child) => lineStartOf(rendered, child) === cut.at) : undefined;
    if (item !== undefined) return readsTheSameAlone(rendered, item, cut);
  }
  return false;
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
 * is read as a list of its own, as it will be in the next message, with its number as `start`
 * rewrites it: what starts in the text `reopening` replaces (the list and the item) is taken to
 * start at its start, and the rest is compared from where that text ends.
 */
function readsTheSameAlone(source: string, node: Nodes, { reopening, resume }: { reopening: string; resume: number }): boolean {
  const lineStart = lineStartOf(source, node);
  const alone = parseMarkdown(reopening + source.slice(resume, endOf(node))).children.flatMap((child) => blocksOf(child, reopening.length));
  const inContext = blocksOf(node, resume);
  if (node.type === 'listItem') inContext.unshift(`list@${lineStart - resume}-${endOf(node) - resume}`);
  const marked = (block: string) => block.replace(/@-\d+/, '@marker');
  return alone.length === inContext.length && alone.every((block, index) => marked(block) === marked(inContext[index]!));
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
    cuts.push({ at, closing: fenced.fence, reopening, resume: at });
  }
  return cuts;
}
