/**
 * What is code in markdown (native streams, `markdown` blocks), as CommonMark has it: Slack reads
 * `markdown_text` as CommonMark, and the bot's safeMarkdown leaves what its CommonMark parser
 * (micromark) calls code verbatim, since Slack shows code as the characters it is. The page must
 * call the same text code, or a `<https://…|label>` the bot left alone inside code becomes a live
 * link here. Code is: a fence of three or more backticks or tildes (closed by a longer or equal run
 * of the same character, else running to the end of its container), an indented block (four
 * columns, which cannot interrupt a paragraph), and a span between equal runs of backticks. Lists
 * are followed for where their content starts (`- item` then a line indented four is the item's
 * paragraph, not code), and block quotes for where they end (a line continuing a quoted paragraph
 * is no code); the renderer reads a quote's content here again. page-tests/markdown-code.test.ts
 * compares these answers with the bot's parser.
 */

const FENCE_OPENING = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const LIST_MARKER = /^ {0,3}([-+*]|\d{1,9}[.)])(?=[ \t]|$)/;
const THEMATIC_BREAK = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const ATX_HEADING = /^ {0,3}#{1,6}(?:[ \t]|$)/;
const BLOCK_QUOTE = /^ {0,3}>/;
const SETEXT_UNDERLINE = /^ {0,3}(?:=+|-+)[ \t]*$/;
/** A line opening 32 quotes or list items: the bot's parser reads no markup in such text (src/slack/format/parse-markdown.ts). */
const TOO_DEEP = /^(?:[ \t]*(?:>|[-+*](?=[ \t])|\d{1,9}[.)](?=[ \t]))){32}/m;

/**
 * Whether `text` nests deeper than the bot reads markdown: its parser takes the whole text as one
 * raw block, shown as plain text (and reading it here, a quote in a quote…, would take long).
 */
export function nestsTooDeep(text) {
  return TOO_DEEP.test(String(text));
}

/**
 * `text` cut into code blocks and the text between: `{ code }` (the block's content, as shown) or
 * `{ text }` (the lines as written, for the line renderer).
 */
export function markdownBlocks(text) {
  const lines = String(text).split('\n');
  // The last line's line ending is not a blank line after it.
  if (lines.length > 1 && lines.at(-1) === '') lines.pop();
  const scanner = newScanner();
  for (const line of lines) scanner.feed(line);
  return scanner.blocks();
}

/**
 * Reads markdown a line at a time, as CommonMark's block parser does, for code blocks only. A block
 * quote's content goes to a scanner of its own, which says whether a line without `>` still
 * continues the quote (lazily, in its paragraph) or ends it.
 */
function newScanner() {
  const blocks = [];
  const push = (kind, line) => {
    const last = blocks.at(-1);
    if (last && kind in last) last[kind].push(line);
    else blocks.push({ [kind]: [line] });
  };
  /** The list items the line may be in, outermost first: where their content starts, whether any has come. */
  const items = [];
  /** `{ marker, length, strip, depth }` while in a fenced block; `{ depth, blanks }` in an indented one. */
  let fence;
  let indented;
  /** `{ scanner, depth }` while in a block quote. */
  let quote;
  /** Whether a paragraph is open (in the quote, if one is): a line may continue it, and no indented block interrupt it. */
  let paragraph = false;

  const endIndented = () => {
    // Blank lines after an indented block are not part of it.
    for (const blank of indented.blanks) push('text', blank);
    indented = undefined;
  };

  const feed = (line) => {
    if (line.trim() === '') {
      if (fence) push('code', stripColumns(line, columnOf(items, fence.depth) + fence.strip));
      else if (indented) indented.blanks.push(stripColumns(line, columnOf(items, indented.depth) + 4));
      else push('text', line);
      // A list item may start with one blank line, not two.
      if (!fence && !indented && items.at(-1)?.empty) items.pop();
      quote = undefined;
      paragraph = false;
      return;
    }
    const indent = indentColumns(line);
    const inside = items.filter((item) => indent >= item.column).length;
    // A line outside the items is no underline of their paragraph, and an item it starts next to one it ends interrupts none.
    const contained = inside === items.length;
    if (!contained) {
      // A line the open items do not take ends them, and the code in them, unless it continues a paragraph lazily.
      const lazy = paragraph && !fence && !indented && !startsBlock(stripColumns(line, columnOf(items, inside)));
      if (!lazy) {
        if (fence && fence.depth > inside) fence = undefined;
        if (indented && indented.depth > inside) endIndented();
        if (quote && quote.depth > inside) quote = undefined;
        items.length = inside;
      }
    }
    for (const item of items) item.empty = false;
    let rest = stripColumns(line, columnOf(items, items.length));

    if (fence) {
      if (closesFence(rest, fence)) fence = undefined;
      else push('code', stripColumns(rest, fence.strip));
      return;
    }
    if (indented) {
      if (indentColumns(rest) >= 4) {
        for (const blank of indented.blanks) push('code', blank);
        indented.blanks = [];
        push('code', stripColumns(rest, 4));
        return;
      }
      endIndented();
    }
    if (quote) {
      if (BLOCK_QUOTE.test(rest) || (paragraph && !startsBlock(rest))) {
        quote.scanner.feed(rest.replace(/^ {0,3}> ?/, ''));
        paragraph = quote.scanner.paragraph();
        push('text', line);
        return;
      }
      quote = undefined;
    }
    if (paragraph && contained && SETEXT_UNDERLINE.test(rest)) {
      // The paragraph above was a heading's text.
      push('text', line);
      paragraph = false;
      return;
    }
    // A list item's first line holds a block of its own: read again from where its content starts.
    let column = columnOf(items, items.length);
    for (let item = listItem(rest, paragraph && contained); item; item = listItem(rest, false)) {
      column += item.contentColumn;
      items.push({ column, empty: item.content.trim() === '' });
      rest = item.content;
      paragraph = false;
    }
    if (indentColumns(rest) >= 4 && rest.trim() !== '' && !paragraph) {
      indented = { depth: items.length, blanks: [] };
      blocks.push({ code: [stripColumns(rest, 4)] });
      return;
    }
    if (BLOCK_QUOTE.test(rest)) {
      quote = { scanner: newScanner(), depth: items.length };
      quote.scanner.feed(rest.replace(/^ {0,3}> ?/, ''));
      paragraph = quote.scanner.paragraph();
      push('text', line);
      return;
    }
    const opening = FENCE_OPENING.exec(rest);
    if (opening && !(opening[1][0] === '`' && opening[2].includes('`'))) {
      fence = { marker: opening[1][0], length: opening[1].length, strip: indentColumns(rest), depth: items.length };
      blocks.push({ code: [] });
      paragraph = false;
      return;
    }
    push('text', line);
    paragraph = rest.trim() !== '' && !ATX_HEADING.test(rest) && !THEMATIC_BREAK.test(rest);
  };

  return {
    feed,
    /** Whether a paragraph is open that the next line could continue. */
    paragraph: () => paragraph && !fence && !indented,
    blocks: () => {
      if (indented) endIndented();
      return blocks.map((block) => ('code' in block ? { code: block.code.join('\n') } : { text: block.text.join('\n') }));
    },
  };
}

/**
 * The code span whose opening backticks start at `index` of `text` (one line or a paragraph):
 * `{ code, end }`, `end` just past its closing run; `{ literal, end }` when no run of the same
 * length closes it (the whole run is then text); undefined when `text[index]` is no backtick.
 */
export function codeSpanAt(text, index) {
  const run = /^`+/.exec(text.slice(index))?.[0];
  if (run === undefined) return undefined;
  const from = index + run.length;
  const closing = new RegExp(`(?<!\`)${run}(?!\`)`, 'g');
  closing.lastIndex = from;
  const close = closing.exec(text);
  if (!close) return { literal: run, end: from };
  let code = text.slice(from, close.index).replace(/\n/g, ' ');
  if (/^ .*[^ ].* $/s.test(code)) code = code.slice(1, -1);
  return { code, end: close.index + run.length };
}

/** What the line, in its container, starts other than a paragraph's next line. */
function startsBlock(rest) {
  return FENCE_OPENING.test(rest) || LIST_MARKER.test(rest) || ATX_HEADING.test(rest) || THEMATIC_BREAK.test(rest) || BLOCK_QUOTE.test(rest);
}

/**
 * A list item starting `rest`: `{ contentColumn, content }`, where its content starts (relative to
 * `rest`) and the rest of the line from there. After a paragraph, only an item with content, and a
 * numbered one only from 1, starts a list.
 */
function listItem(rest, afterParagraph) {
  if (THEMATIC_BREAK.test(rest)) return undefined;
  const marker = LIST_MARKER.exec(rest);
  if (!marker) return undefined;
  const after = rest.slice(marker[0].length);
  const empty = after.trim() === '';
  if (afterParagraph && (empty || (/^\d/.test(marker[1]) && Number.parseInt(marker[1], 10) !== 1))) return undefined;
  const markerEnd = indentColumns(rest) + marker[1].length;
  const spaces = indentColumns(after, markerEnd);
  // Five or more spaces: the item's content starts after one, and the rest is an indented block.
  const contentColumn = empty || spaces > 4 ? markerEnd + 1 : markerEnd + spaces;
  return { contentColumn, content: stripColumns(after, contentColumn - markerEnd, markerEnd) };
}

function closesFence(rest, fence) {
  const closing = /^ {0,3}(`+|~+)[ \t]*$/.exec(rest);
  return closing !== null && closing[1][0] === fence.marker && closing[1].length >= fence.length;
}

function columnOf(items, depth) {
  return depth === 0 ? 0 : items[depth - 1].column;
}

/** The columns of whitespace `line` starts with, a tab reaching the next multiple of four. */
function indentColumns(line, start = 0) {
  let column = start;
  for (const character of line) {
    if (character === ' ') column++;
    else if (character === '\t') column += 4 - (column % 4);
    else break;
  }
  return column - start;
}

/**
 * `line`, which starts at column `start`, without its first `columns` columns of whitespace (a tab
 * that straddles them leaves spaces).
 */
function stripColumns(line, columns, start = 0) {
  let column = start;
  let index = 0;
  while (index < line.length && column < start + columns) {
    const character = line[index];
    if (character === ' ') column++;
    else if (character === '\t') column += 4 - (column % 4);
    else break;
    index++;
  }
  return ' '.repeat(Math.max(0, column - start - columns)) + line.slice(index);
}
