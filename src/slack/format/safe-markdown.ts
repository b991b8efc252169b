import type { Nodes, Root } from 'mdast';
import { linkLabelIsHonest } from './link-label.js';
import { ZERO_WIDTH_SPACE } from './escape-mrkdwn.js';
import { inertMention, inertUserMention, liveMention, mapSlackReferences, neutralisePlainBroadcasts, plainBroadcastOffsets, type MentionableUserIds } from './neutralise-pings.js';
import { codeNodes, definitionsOf, endOf, normaliseLineEndings, parseMarkdown, plainText, startOf } from './parse-markdown.js';

export interface SafeMarkdownOptions {
  /** Who `<@U…>` may notify; anyone else is shown as `@name`. Default: nobody. */
  mentionableUserIds?: MentionableUserIds;
}

/** `&amp;`, `&#60;`, `&#x3C;`: what CommonMark decodes (and so could spell `<`). */
const ENTITY = /^&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{0,31});/;

/** Where an HTML node is a block of its own rather than a tag inside text. */
const FLOW_CONTAINERS = new Set(['root', 'blockquote', 'listItem', 'footnoteDefinition']);

/** A rewrite of one stretch of the source. */
interface Edit {
  start: number;
  end: number;
  text: string;
}

/**
 * Making text safe can change how the rest parses (an escaped `<` ends an HTML block, so a fence
 * inside it starts counting): the result is checked again until nothing changes. Two passes in
 * practice; past this, everything is escaped.
 */
const MAX_PASSES = 6;

/**
 * Makes the model's standard markdown safe for Slack's `markdown_text` (native streaming), where
 * Slack renders it: no broadcast or group ping survives, nor a mention of anyone not mentionable;
 * `<` and `&` cannot start Slack markup, HTML or an entity (they are backslash-escaped, which
 * CommonMark shows as plain characters); a link whose label names another address shows its real
 * target. Code — as the CommonMark parser sees it, so the same code `markdownToMrkdwn` sees — is
 * left verbatim, and so is all other markdown: only what is unsafe is rewritten.
 */
export function safeMarkdown(markdown: string, options: SafeMarkdownOptions = {}): string {
  return parsedSafeMarkdown(markdown, options).markdown;
}

/**
 * `safeMarkdown`, and the parser's tree of the text it returns (the last pass parsed it, to find
 * nothing to change): a caller that reads that text's blocks too need not parse a long answer again.
 */
export function parsedSafeMarkdown(markdown: string, { mentionableUserIds = [] }: SafeMarkdownOptions = {}): { markdown: string; tree: Root } {
  let current = normaliseLineEndings(markdown);
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const tree = parseMarkdown(current);
    const next = safePass(current, tree, mentionableUserIds);
    if (next === current) return { markdown: current, tree };
    current = next;
  }
  const escaped = escapeEverything(current);
  return { markdown: escaped, tree: parseMarkdown(escaped) };
}

/** Whether Slack, reading `markdown` as CommonMark, finds nothing in it that `safeMarkdown` would change. */
export function isSafeMarkdown(markdown: string, { mentionableUserIds = [], tree = parseMarkdown(markdown) }: SafeMarkdownOptions & { tree?: Root } = {}): boolean {
  return safePass(markdown, tree, mentionableUserIds) === markdown;
}

/** `source` made safer, read from `tree`, its parse. */
function safePass(source: string, tree: Root, mentionable: MentionableUserIds): string {
  // A ping word can be made of two nodes (`@` and `here@x.io`), so these are found in the whole source.
  const code = codeNodes(tree);
  const pings = plainBroadcastOffsets(source).filter((offset) => !code.some((node) => startOf(node) < offset && offset < endOf(node)));
  if (pings.length > 0) return [0, ...pings].map((offset, index) => source.slice(offset, pings[index])).join(ZERO_WIDTH_SPACE);
  const definitions = definitionsOf(tree);
  const edits: Edit[] = [];
  const written = (node: Nodes) => source.slice(startOf(node), endOf(node));
  const rewrite = (node: Nodes, text: string): void => {
    edits.push({ start: startOf(node), end: endOf(node), text });
  };
  const asText = (node: Nodes) => rewrite(node, safeText(written(node), mentionable));
  // The label as plain text, then the real target: nothing in either may read as markup.
  const showTarget = (node: Nodes, url: string) => rewrite(node, `${safeText(plainText(node), mentionable, escapePlain)} (${escapePlain(url)})`);

  /** `quotes`: how many block quotes `node` is in. */
  const visit = (node: Nodes, parent: Nodes, quotes: number): void => {
    switch (node.type) {
      case 'code':
      case 'inlineCode':
        return;
      case 'html':
        // Raw HTML, which CommonMark does not unescape: shown as the plain text it is.
        if (FLOW_CONTAINERS.has(parent.type)) return void edits.push(safeHtmlBlock(node, parent, quotes));
        return rewrite(node, safeText(written(node), mentionable, escapePlain));
      case 'text':
      case 'definition':
        return asText(node);
      case 'link': {
        // Autolinks (`<https://…|label>` is Slack's own link syntax) and bare URLs are text.
        if (!written(node).startsWith('[')) return asText(node);
        if (!linkLabelIsHonest({ url: node.url, label: plainText(node) })) return showTarget(node, node.url);
        for (const child of node.children) visit(child, node, quotes);
        const labelEnd = node.children.length === 0 ? startOf(node) + 1 : endOf(node.children.at(-1) as Nodes);
        // A title, an entity or markup in the target: written again as a plain address.
        if (source.slice(labelEnd, endOf(node)) !== `](${node.url})` || /[<>|]/.test(node.url)) {
          edits.push({ start: labelEnd, end: endOf(node), text: `](${markdownHref(node.url)})` });
        }
        return;
      }
      case 'image': {
        const alt = node.alt ?? '';
        if (!linkLabelIsHonest({ url: node.url, label: alt })) return showTarget(node, node.url);
        const clean = written(node) === `![${alt}](${node.url})` && !/[<>|]/.test(node.url) && safeText(alt, mentionable) === alt;
        if (!clean) rewrite(node, `![${escapePlain(alt)}](${markdownHref(node.url)})`);
        return;
      }
      case 'linkReference':
      case 'imageReference': {
        const definition = definitions.get(node.identifier);
        if (definition !== undefined && !linkLabelIsHonest({ url: definition.url, label: plainText(node) })) return showTarget(node, definition.url);
        if (node.type === 'imageReference') return asText(node);
        for (const child of node.children) visit(child, node, quotes);
        return;
      }
      default:
        if ('children' in node) for (const child of node.children) visit(child, node, node.type === 'blockquote' ? quotes + 1 : quotes);
    }
  };

  /**
   * An HTML block, shown as text. As text it must not change how the lines around it parse: it
   * could continue a paragraph just before it, each of its lines could start a block (a fence), and
   * the line after it could continue it (a lazy line, or an indented line that was code): so it gets
   * a blank line before and after, inside the same quote or list item, and the first mark of each line is escaped.
   * Its first line may be a lazy line, without the marks and indentation of the quotes and list
   * items it is in (the parser takes a tag after a paragraph's lazy line as a block in the
   * paragraph's container): after the blank line it would fall out of them, and what follows with
   * it (a fence in the list item, which then opens at another indentation), so it is given theirs.
   */
  const safeHtmlBlock = (node: Nodes, parent: Nodes, quotes: number): Edit => {
    const lineStart = source.lastIndexOf('\n', startOf(node) - 1) + 1;
    const siblings = 'children' in parent ? (parent.children as Nodes[]) : [];
    const previous = siblings[siblings.indexOf(node) - 1];
    const ownPrefix = source.slice(lineStart, startOf(node));
    const containers = previous === undefined ? ownPrefix : containerPrefix(previous, source);
    const lazy = isLazyPrefix(ownPrefix, containers);
    const prefix = lazy ? containers : ownPrefix;
    const blank = `\n${prefix.replace(/[^>\s]/g, ' ').trimEnd()}`;
    const afterParagraph = previous !== undefined && endsInParagraph(previous) && (previous.position?.end.line ?? 0) === (node.position?.start.line ?? 0) - 1;
    const lines = written(node)
      .split('\n')
      .map((line, index) => {
        // Each line after the first starts with the marks of the quotes it is in (HTML has no lazy
        // lines) and indentation; a `>` after those is text, and is escaped like any first mark.
        // A lazy first line's own indentation goes: with the containers' it could make indented code.
        const indent = index === 0 ? '' : (new RegExp(`^(?:[ \\t]*>){${quotes}}[ \\t]*`).exec(line)?.[0] ?? '');
        const text = index === 0 && lazy ? line.trimStart() : line.slice(indent.length);
        return indent + safeText(text, mentionable, escapePlain);
      });
    const after = /^\n[ \t]*\S/.test(source.slice(endOf(node))) ? blank : '';
    // A lazy line is written again from its start, its containers' marks in place of its own.
    if (lazy) return { start: lineStart, end: endOf(node), text: `${afterParagraph ? `${blank.slice(1)}\n` : ''}${prefix}${lines.join('\n')}${after}` };
    return { start: startOf(node), end: endOf(node), text: (afterParagraph ? `\n${prefix}` : '') + lines.join('\n') + after };
  };

  visit(tree, tree, 0);

  let output = '';
  let last = 0;
  for (const edit of edits.sort((a, b) => a.start - b.start)) {
    output += source.slice(last, edit.start) + edit.text;
    last = edit.end;
  }
  return output + source.slice(last);
}

/**
 * Text as the model wrote it (escapes and all), with its `<…>` Slack markup kept or defused; with
 * `escapePlain`, plain text (a label) that must not read as markup at all.
 */
function safeText(text: string, mentionable: MentionableUserIds, escapeWith: (text: string) => string = escapeText): string {
  return mapSlackReferences(
    text,
    (reference, whole) => {
      if (reference.kind === 'user') return liveMention(reference, mentionable) ?? escapeWith(inertUserMention(reference));
      if (reference.kind === 'special') return escapeWith(inertMention(reference.label));
      // A channel link notifies no one; a date, a link and anything else are escaped with the text around them.
      return reference.kind === 'channel' ? whole : undefined;
    },
    escapeWith,
  );
}

/**
 * Markdown text with a backslash before each `<`, and each `&` that would start an entity, not
 * already escaped (after an odd run of backslashes); and no plain broadcast.
 */
function escapeText(text: string): string {
  let result = '';
  let backslashes = 0;
  for (let index = 0; index < text.length; index++) {
    const character = text.charAt(index);
    const unsafe = character === '<' || (character === '&' && ENTITY.test(text.slice(index)));
    if (unsafe && backslashes % 2 === 0) result += '\\';
    result += character;
    backslashes = character === '\\' ? backslashes + 1 : 0;
  }
  return neutralisePlainBroadcasts(result);
}

/**
 * The marks and indentation that put a line in the quotes and list items `node` is in, list
 * markers as spaces: what stands before its first line, which no block starts lazily.
 */
function containerPrefix(node: Nodes, source: string): string {
  const lineStart = source.lastIndexOf('\n', startOf(node) - 1) + 1;
  return source.slice(lineStart, startOf(node)).replace(/[^>\s]/g, ' ');
}

/** Whether a line that starts with `prefix` lacks some of `containers`' quote marks or indentation (a lazy line). */
function isLazyPrefix(prefix: string, containers: string): boolean {
  const marks = (text: string) => text.split('>').length - 1;
  return marks(prefix) < marks(containers) || columns(prefix) < columns(containers);
}

/** How many columns `text` takes at a line start, tabs to the next multiple of 4 as CommonMark counts them. */
function columns(text: string): number {
  let column = 0;
  for (const character of text) column = character === '\t' ? column + 4 - (column % 4) : column + 1;
  return column;
}

/** Whether a line after `node` could continue a paragraph at its end (in its last list item or quote, lazily). */
function endsInParagraph(node: Nodes): boolean {
  if (node.type === 'paragraph') return true;
  const last = ['list', 'listItem', 'blockquote', 'footnoteDefinition'].includes(node.type) && 'children' in node ? node.children.at(-1) : undefined;
  return last !== undefined && endsInParagraph(last);
}

/** Plain text as markdown: every character that could be markup escaped, and none at a line start. */
function escapePlain(text: string): string {
  return neutralisePlainBroadcasts(startsNoBlock(text.replace(/[\\`*_~[\]<&!]/g, '\\$&')));
}

/** No line of `text` can start a block (a list item, an underline, a fence, a quote…): its first mark is escaped. */
function startsNoBlock(text: string): string {
  return text.replace(/^([ \t]*)(\d{1,9}(?=[.)])|(?=[-+=`~#>|*_<]))/gm, (_whole, indent: string, digits: string | undefined) => `${indent}${digits ?? ''}\\`);
}

/** Every ASCII punctuation character escaped: text with no markup left in it at all. */
function escapeEverything(text: string): string {
  return neutralisePlainBroadcasts(text.replace(/[!-/:-@[-`{-~]/g, '\\$&'));
}

/** A link target that cannot end early or carry markup: `|`, parentheses and `<>` percent-encoded. */
function markdownHref(url: string): string {
  return new URL(url).href.replaceAll('|', '%7C').replaceAll('(', '%28').replaceAll(')', '%29').replaceAll('<', '%3C').replaceAll('>', '%3E');
}
