import type { Definition, List, Nodes, PhrasingContent, RootContent } from 'mdast';
import { linkToMrkdwn } from './link-to-mrkdwn.js';
import { inertMention, inertUserMention, liveMention, mapSlackReferences, neutraliseBroadcastWords, type MentionableUserIds, type SlackReference } from './neutralise-pings.js';
import { definitionsOf, endOf, normaliseLineEndings, parseMarkdown, plainText, startOf } from './parse-markdown.js';
import { untrustedTextToMrkdwn } from './untrusted-text.js';

export { neutralisePings } from './neutralise-pings.js';

export interface MarkdownToMrkdwnOptions {
  /** Who `<@U…>` may notify; anyone else is shown as `@name`. Default: nobody. `<#C…>` channel links are always kept. */
  mentionableUserIds?: MentionableUserIds;
}

interface Context {
  source: string;
  mentionable: MentionableUserIds;
  definitions: ReadonlyMap<string, Definition>;
  /** Inside a quote: Slack quotes are one level deep. */
  quoted: boolean;
  /** Inside bold (a heading): bold markers inside would close Slack's bold early. */
  bold: boolean;
}

/**
 * Converts the model's markdown to Slack mrkdwn that is safe to post: every `&`, `<`, `>` is
 * escaped except the mentions we allow, no form of broadcast or group ping survives, link labels
 * cannot disguise their target, and code is kept verbatim (escaped, never reformatted). What is
 * code is the CommonMark parser's call (an unclosed fence runs to the end, as CommonMark says).
 * The result is for `text` and `mrkdwn` text objects — not for `markdown` blocks or
 * `chat.*Stream` `markdown_text`, which take standard markdown (see `safeMarkdown`).
 */
export function markdownToMrkdwn(markdown: string, { mentionableUserIds = [] }: MarkdownToMrkdwnOptions = {}): string {
  const source = normaliseLineEndings(markdown);
  const tree = parseMarkdown(source);
  const definitions = definitionsOf(tree);
  // Each piece of text is defused on its own; this catches a ping word made of two (`@` + `here@x.io`).
  return neutraliseBroadcastWords(blocks(tree.children, { source, mentionable: mentionableUserIds, definitions, quoted: false, bold: false }));
}

/** Blocks one per line, with a blank line between them where the model left one. */
function joinBlocks<NODE extends Nodes>(nodes: readonly NODE[], render: (node: NODE, index: number) => string): string {
  let output = '';
  let previous: NODE | undefined;
  for (const [index, node] of nodes.entries()) {
    const rendered = render(node, index);
    if (rendered === '') continue;
    if (previous !== undefined) output += (node.position?.start.line ?? 0) - (previous.position?.end.line ?? 0) > 1 ? '\n\n' : '\n';
    output += rendered;
    previous = node;
  }
  return output;
}

function blocks(nodes: readonly RootContent[], context: Context): string {
  return joinBlocks(nodes, (node) => block(node, context));
}

function block(node: RootContent, context: Context): string {
  switch (node.type) {
    case 'paragraph':
      return inline(node.children, context);
    case 'heading': {
      const content = inline(node.children, { ...context, bold: true }).trim();
      return content === '' ? '' : `*${content}*`;
    }
    case 'thematicBreak':
      return '──────────';
    case 'blockquote': {
      const content = blocks(node.children, { ...context, quoted: true });
      if (context.quoted) return content;
      return content
        .split('\n')
        .map((line) => (line === '' ? '>' : `> ${line}`))
        .join('\n');
    }
    case 'list':
      return list(node, context);
    case 'code':
      return codeBlock(node.value.split('\n'));
    case 'table':
      // Slack has no tables; monospace keeps the columns aligned.
      return codeBlock(writtenLines(node, context.source));
    case 'html':
      return slackText(node.value, context);
    case 'definition':
      // Shown by the references that use it, as CommonMark does.
      return '';
    case 'footnoteDefinition':
      return `${slackText(`[^${node.label ?? node.identifier}]: `, context)}${blocks(node.children, context)}`;
    default:
      return anyNode(node, context);
  }
}

function list(node: List, context: Context): string {
  return joinBlocks(node.children, (item, index) => {
    const marker = node.ordered ? `${(node.start ?? 1) + index}. ` : '• ';
    const box = item.checked === true ? '☑ ' : item.checked === false ? '☐ ' : '';
    const [first = '', ...rest] = blocks(item.children, context).split('\n');
    return [`${marker}${box}${first}`, ...rest.map((line) => (line === '' ? '' : `${' '.repeat(marker.length)}${line}`))].join('\n');
  });
}

/** A block's lines as the model wrote them, without the quote or list prefix the block sits in. */
function writtenLines(node: Nodes, source: string): string[] {
  const [first = '', ...rest] = source.slice(startOf(node), endOf(node)).split('\n');
  return [first, ...rest.map((line) => line.slice((node.position?.start.column ?? 1) - 1))];
}

/** Slack ignores the language tag, so it is dropped; backtick runs inside cannot close the block. */
function codeBlock(lines: string[]): string {
  if (lines.every((line) => line.trim() === '')) return '';
  return ['```', ...lines.map((line) => untrustedTextToMrkdwn(line)), '```'].join('\n');
}

function inline(nodes: readonly PhrasingContent[], context: Context): string {
  return nodes.map((node) => phrasing(node, context)).join('');
}

function phrasing(node: PhrasingContent, context: Context): string {
  switch (node.type) {
    case 'text':
    case 'html':
      return slackText(node.value, context);
    case 'inlineCode':
      // Slack code spans cannot contain a backtick (a look-alike keeps the content readable) nor,
      // as CommonMark says, a line ending.
      return `\`${untrustedTextToMrkdwn(node.value.replaceAll('`', '\u02CB').replaceAll('\n', ' '))}\``;
    case 'strong':
      return context.bold ? inline(node.children, context) : `*${inline(node.children, { ...context, bold: true })}*`;
    case 'emphasis': {
      const [only] = node.children;
      // `***both***`: bold outside, so Slack sees `*_both_*`.
      if (node.children.length === 1 && only?.type === 'strong' && !context.bold) return `*_${inline(only.children, { ...context, bold: true })}_*`;
      return `_${inline(node.children, context)}_`;
    }
    case 'delete':
      return `~${inline(node.children, context)}~`;
    case 'break':
      return '\n';
    case 'link': {
      const written = context.source.slice(startOf(node), endOf(node));
      // `<https://…|label>` is Slack's own link syntax (to CommonMark, an autolink).
      if (written.startsWith('<')) return slackText(written, context);
      // A bare URL: where Slack's own URL detection stops is unknowable, so it is left as text.
      if (!written.startsWith('[')) return untrustedTextToMrkdwn(written);
      return linkToMrkdwn({ url: node.url, label: labelOf(node) });
    }
    case 'image':
      return linkToMrkdwn({ url: node.url, label: node.alt ?? '' });
    case 'linkReference':
    case 'imageReference': {
      const definition = context.definitions.get(node.identifier);
      if (definition === undefined) return slackText(context.source.slice(startOf(node), endOf(node)), context);
      return linkToMrkdwn({ url: definition.url, label: labelOf(node) });
    }
    case 'footnoteReference':
      return slackText(`[^${node.label ?? node.identifier}]`, context);
    default:
      return anyNode(node, context);
  }
}

/** A link's label on one line, as a Slack link needs it. */
function labelOf(node: Nodes): string {
  return plainText(node).replace(/\s*\n\s*/g, ' ');
}

/** A node of a kind not handled above: its text, as text. */
function anyNode(node: Nodes, context: Context): string {
  if ('children' in node) return inline(node.children as PhrasingContent[], context);
  return 'value' in node ? slackText(node.value, context) : '';
}

/** Literal text: escaped, with the `<…>` Slack markup in it kept, defused or made a checked link. */
function slackText(text: string, context: Context): string {
  return mapSlackReferences(text, (reference, whole) => slackReferenceToMrkdwn(reference, whole, context), untrustedTextToMrkdwn);
}

function slackReferenceToMrkdwn(reference: SlackReference, whole: string, context: Context): string | undefined {
  switch (reference.kind) {
    case 'user':
      return liveMention(reference, context.mentionable) ?? untrustedTextToMrkdwn(inertUserMention(reference));
    case 'channel':
    case 'date':
      return whole;
    case 'special':
      return untrustedTextToMrkdwn(inertMention(reference.label));
    case 'link':
      return linkToMrkdwn({ url: reference.url, label: reference.label });
    case 'other':
      return undefined;
  }
}
