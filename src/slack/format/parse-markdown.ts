import type { Code, Definition, Nodes, Root } from 'mdast';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { gfmFromMarkdown } from 'mdast-util-gfm';
import { gfm } from 'micromark-extension-gfm';

/*
 * What is code and what is text is decided by a real CommonMark parser, never by scanning for
 * fences by hand: the hand-written scanner got the spec's corner cases wrong (a backtick in a
 * backtick fence's info string opens no block; a fence in a list item or a quote ends with it),
 * and text it took for code was sent unescaped. micromark is the CommonMark-conformant parser of
 * the unified/mdast family (it passes the spec's examples), and its mdast tree carries source
 * offsets, which lets native streaming keep the model's own markdown and change only what is
 * unsafe. GFM on top for what the model writes and Slack shows: tables, strikethrough, task lists,
 * bare links (which must not be read as emphasis).
 */
const EXTENSIONS = [gfm()];
const MDAST_EXTENSIONS = [gfmFromMarkdown()];

/**
 * Nesting deeper than this (a quote in a list in a quote…) no reader needs, and walking it could
 * exhaust the stack (as parsing it can): such text is taken as one raw block, shown as plain text.
 */
const MAX_DEPTH = 64;
/** A line opening more containers than that nesting allows: seen before parsing, which would take long. */
const TOO_DEEP = /^(?:[ \t]*(?:>|[-+*](?=[ \t])|\d{1,9}[.)](?=[ \t]))){32}/m;

export function parseMarkdown(markdown: string): Root {
  if (TOO_DEEP.test(markdown)) return rawBlock(markdown);
  try {
    const tree = fromMarkdown(markdown, { extensions: EXTENSIONS, mdastExtensions: MDAST_EXTENSIONS });
    return depthOf(tree) > MAX_DEPTH ? rawBlock(markdown) : tree;
  } catch (error) {
    if (error instanceof RangeError) return rawBlock(markdown);
    throw error;
  }
}

function depthOf(tree: Root): number {
  let deepest = 0;
  const pending: Array<[Nodes, number]> = [[tree, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next;
    deepest = Math.max(deepest, depth);
    if ('children' in node) for (const child of node.children) pending.push([child, depth + 1]);
  }
  return deepest;
}

/** The whole text as one HTML block: text that neither mode reads any markup in. */
function rawBlock(markdown: string): Root {
  const lines = markdown.split('\n');
  const position = { start: { line: 1, column: 1, offset: 0 }, end: { line: lines.length, column: (lines.at(-1)?.length ?? 0) + 1, offset: markdown.length } };
  return { type: 'root', children: [{ type: 'html', value: markdown, position }], position };
}

/** Line endings as CommonMark counts them, so offsets line up with `\n`. */
export function normaliseLineEndings(markdown: string): string {
  return markdown.replace(/\r\n?/g, '\n');
}

export function startOf(node: Nodes): number {
  return node.position?.start.offset ?? 0;
}

export function endOf(node: Nodes): number {
  return node.position?.end.offset ?? 0;
}

/** The text a reader sees in a node (a link's label): every literal value under it, markup dropped. */
export function plainText(node: Nodes): string {
  if ('value' in node) return node.value;
  if (node.type === 'image' || node.type === 'imageReference') return node.alt ?? '';
  return 'children' in node ? node.children.map((child) => plainText(child)).join('') : '';
}

/** Every code block and code span of a tree, in document order. */
export function codeNodes(tree: Root): Array<Extract<Nodes, { type: 'code' | 'inlineCode' }>> {
  return nodesOf(tree, (node) => node.type === 'code' || node.type === 'inlineCode');
}

/**
 * The link reference definitions of a tree, by identifier: wherever one stands, references anywhere
 * use it. A label defined twice links to its first definition, as CommonMark (and so Slack) says:
 * taking the last let a label check pass against an address the reader's link does not go to.
 * `identifier` is the label as CommonMark matches labels (whitespace collapsed, case folded, as micromark
 * folds it), so labels written differently that CommonMark takes as one are one here too.
 */
export function definitionsOf(tree: Root): Map<string, Definition> {
  const definitions = new Map<string, Definition>();
  for (const node of nodesOf(tree, (node) => node.type === 'definition')) if (!definitions.has(node.identifier)) definitions.set(node.identifier, node);
  return definitions;
}

/**
 * Whether a tree has a link reference or footnote definition: text before it, wherever, can read
 * otherwise with it than without (`[docs][x`]` is a link once `[x`]` is defined, and the backtick
 * in its label no longer opens a code span).
 */
export function hasDefinitions(tree: Root): boolean {
  return nodesOf(tree, (node) => node.type === 'definition' || node.type === 'footnoteDefinition').length > 0;
}

function nodesOf<NODE extends Nodes>(tree: Root, wanted: (node: Nodes) => node is NODE): NODE[] {
  const found: NODE[] = [];
  const walk = (node: Nodes): void => {
    if (wanted(node)) found.push(node);
    else if ('children' in node) for (const child of node.children) walk(child);
  };
  walk(tree);
  return found;
}

/** `` ``` `` or `~~~~`: the fence a fenced code block opened with; `undefined` for an indented block. */
function openingFence(source: string, block: Code): string | undefined {
  return /^(`{3,}|~{3,})/.exec(source.slice(startOf(block)))?.[1];
}

/**
 * A fenced code block's fence, and whether a closing fence of its own ends it (else it runs to the
 * end of its container, or of the text): `undefined` for an indented code block.
 */
export function fenceOf(source: string, block: Code): { fence: string; closed: boolean } | undefined {
  const fence = openingFence(source, block);
  if (fence === undefined) return undefined;
  const lastLine = source.lastIndexOf('\n', endOf(block) - 1);
  const closing = lastLine > startOf(block) ? /^ {0,3}(`+|~+)[ \t]*$/.exec(source.slice(lastLine + 1, endOf(block)))?.[1] : undefined;
  return { fence, closed: closing !== undefined && closing[0] === fence[0] && closing.length >= fence.length };
}

/**
 * The fence of a fenced code block the text leaves open at its end (a model stopped inside it),
 * for text added after it to close first. Only a block at the top level: one in a quote or a list
 * item ends with its container, and a fence written after it would open a block of its own.
 */
export function fenceLeftOpen(source: string): string | undefined {
  const last = parseMarkdown(source).children.at(-1);
  if (last?.type !== 'code') return undefined;
  const fenced = fenceOf(source, last);
  return fenced === undefined || fenced.closed ? undefined : fenced.fence;
}
