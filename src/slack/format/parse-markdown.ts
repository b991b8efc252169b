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

/** The link reference definitions of a tree, by identifier: wherever one stands, references anywhere use it. */
export function definitionsOf(tree: Root): Map<string, Definition> {
  return new Map(nodesOf(tree, (node) => node.type === 'definition').map((node) => [node.identifier, node]));
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

/** What may stand before a fence on its opening line: indentation, quote markers, list markers. */
const CONTAINER_PREFIX = /^(?: |>|[-+*](?= )|\d{1,9}[.)](?= ))*$/;

/**
 * The text that puts a line in the same containers as a fence's opening line: that line's text
 * before the fence, with each list marker turned into as many spaces (the item's continuation lines
 * are indented so) and quote markers kept. A fence in a list item or a quote is closed only by a
 * fence in the same container, never by one at column 0. Anything else before the fence (a tab,
 * whose width depends on its column) gives no prefix.
 *
 * The next message has the quotes but not the list items, whose indentation is only indentation
 * there. A fence 4 or more spaces in from the last `>` (or the line start) opens an indented code
 * block there, which the block's lines indented less than 4 (code in the item, where a fence's own
 * indentation is taken off its lines only as far as they have it) leave as paragraphs, live. So
 * such a prefix loses the fence's own indentation (up to 3 spaces past its container's content
 * column). In an item indented 3 or fewer, the reopened fence then holds every line after it; the
 * block's own closing fence, 4 or more in, does not close it there, so text after the block in
 * that message shows as code (raw, never live) rather than code as text (`shortened`; a later
 * fence must not close it either, see `fenceOpenAt`). In a nested item every line of the block is
 * indented 4 or more: indented code, with the fences shown, either way.
 */
function continuationPrefix(source: string, block: Code): { prefix: string; shortened: boolean } {
  const prefix = containersOf(source, block);
  if (prefix === undefined) return { prefix: '', shortened: false };
  const indentation = (text: string) => /(?:^|> ?)( *)$/.exec(text)?.[1]?.length ?? 0;
  if (indentation(prefix) < 4) return { prefix, shortened: false };
  const shorter = containerPrefix(source, block, prefix);
  // In a nested item the reopened fence is indented code either way, which no fence closes.
  return { prefix: shorter, shortened: shorter !== prefix && indentation(shorter) < 4 };
}

/** The text before `block` on its first line, list markers turned into spaces: `undefined` if anything but containers. */
function containersOf(source: string, block: Code): string | undefined {
  const linePrefix = source.slice(source.lastIndexOf('\n', startOf(block) - 1) + 1, startOf(block));
  if (!CONTAINER_PREFIX.test(linePrefix)) return undefined;
  return linePrefix.replace(/[-+*](?= )|\d{1,9}[.)](?= )/g, (marker) => ' '.repeat(marker.length));
}

/**
 * `prefix` less the fence's own indentation: the shortest of it less up to 3 of its last spaces
 * that still puts a line in the block. The parser is asked, as an item's content column is set on
 * its marker's line, in the item's own containers there.
 */
function containerPrefix(source: string, block: Code, prefix: string): string {
  const openingLineEnd = source.indexOf('\n', startOf(block));
  const openingLines = openingLineEnd === -1 ? source : source.slice(0, openingLineEnd);
  const inBlock = (shorter: string) => {
    const probe = `${openingLines}\n${shorter}x`;
    return codeNodes(parseMarkdown(probe)).some((node) => node.type === 'code' && startOf(node) === startOf(block) && endOf(node) === probe.length);
  };
  let shortest = prefix;
  for (let drop = 1; drop <= 3 && prefix.at(-drop) === ' ' && inBlock(prefix.slice(0, -drop)); drop++) shortest = prefix.slice(0, -drop);
  return shortest;
}

/**
 * The fence of the fenced code block that a cut at `offset` falls inside of, if any: text continued
 * after the cut needs that block reopened. A cut in the opening line, after the fence, leaves the
 * rest of the info string to follow: it is reopened on that line (`inOpeningLine`), else the rest
 * would be text outside the block. `prefix` goes before the fence that closes and the fence that
 * reopens it, for the block's own closing fence (indented, or after `>`) to still close it, and
 * before the rest of a code line cut in two.
 *
 * `reopen` is the fence to reopen it with: `fence`, unless the prefix left out the fence's own
 * indentation. The block's own closing fence, as indented, then does not close it in the next
 * message, and a later fence of the answer would (an output block's plain `` ``` ``), turning that
 * block's code into live text. So it is reopened with a fence of its character longer than any run
 * of that character in `source`, which nothing the answer wrote so far closes: the rest of that
 * message stays code (raw, never live).
 */
export function fenceOpenAt(source: string, offset: number): { fence: string; reopen: string; prefix: string; inOpeningLine: boolean } | undefined {
  // No fence before the cut, no fenced block open at it: a long answer is not parsed at each cut.
  const before = source.slice(0, offset);
  if (!before.includes('```') && !before.includes('~~~')) return undefined;
  for (const node of codeNodes(parseMarkdown(source))) {
    // A block ends at its closing fence, or with its container (on a blank line, in a list item): a
    // cut there leaves nothing of it to follow.
    if (node.type !== 'code' || startOf(node) >= offset || offset >= endOf(node)) continue;
    const fence = openingFence(source, node);
    if (fence === undefined || offset < startOf(node) + fence.length) continue;
    const openingLineEnd = source.indexOf('\n', startOf(node));
    const { prefix, shortened } = continuationPrefix(source, node);
    const reopen = shortened ? unclosableFence(source, fence) : fence;
    return { fence, reopen, prefix, inOpeningLine: openingLineEnd === -1 || offset <= openingLineEnd };
  }
  return undefined;
}

/**
 * The text that puts the rest of a line of an indented code block, cut in two at `offset`, back in
 * the block in the next message: its containers (`>`, a list item's indentation) and 4 spaces.
 * Without it the rest would be a paragraph there, live. Where the containers give no prefix (a tab),
 * 4 spaces keep it code, if out of its quote.
 */
export function indentedCodeAt(source: string, offset: number): { prefix: string } | undefined {
  // A line of an indented code block holds 4 spaces or a tab before its text (after its containers' markers).
  const line = source.slice(source.lastIndexOf('\n', offset - 1) + 1, offset);
  if (!line.includes('    ') && !line.includes('\t')) return undefined;
  for (const node of codeNodes(parseMarkdown(source))) {
    if (node.type !== 'code' || startOf(node) >= offset || offset >= endOf(node) || openingFence(source, node) !== undefined) continue;
    const containers = containersOf(source, node) ?? '';
    // After a `>` with no space, the first space would be the quote marker's.
    return { prefix: `${containers}${containers.endsWith('>') ? ' ' : ''}    ` };
  }
  return undefined;
}

/** A fence of `fence`'s character longer than any run of that character in `source`. */
function unclosableFence(source: string, fence: string): string {
  const runs = source.match(fence.startsWith('`') ? /`+/g : /~+/g) ?? [];
  return fence[0]!.repeat(Math.max(fence.length, ...runs.map((run) => run.length)) + 1);
}

/**
 * The fence of a fenced code block the text leaves open at its end (a model stopped inside it),
 * for text added after it to close first. Only a block at the top level: one in a quote or a list
 * item ends with its container, and a fence written after it would open a block of its own.
 */
export function fenceLeftOpen(source: string): string | undefined {
  const last = parseMarkdown(source).children.at(-1);
  if (last?.type !== 'code') return undefined;
  const fence = openingFence(source, last);
  if (fence === undefined) return undefined;
  const lines = source.slice(startOf(last), endOf(last)).split('\n');
  const closing = lines.length > 1 ? /^ {0,3}(`+|~+)[ \t]*$/.exec(lines.at(-1) ?? '')?.[1] : undefined;
  const closed = closing !== undefined && closing[0] === fence[0] && closing.length >= fence.length;
  return closed ? undefined : fence;
}
