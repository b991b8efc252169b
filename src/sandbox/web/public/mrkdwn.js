/**
 * Slack mrkdwn (and, with `{ markdown: true }`, the markdown of `markdown` blocks and native
 * streams) to HTML. Every character of the source reaches the output through `escapeHtml`.
 *
 * `ctx`: `{ users: {id: name}, channels: {id: name}, actingUserId?, timeZone?, now? }`.
 */
import { formatSlackDate } from './dates.js';
import { emojiFor } from './emoji.js';
import { decodeSlackEntities, escapeHtml, linkHtml } from './escape.js';
import { labelledLinkHtml } from './link-label.js';
import { codeSpanAt, markdownBlocks, nestsTooDeep } from './markdown-code.js';

const FENCE = '```';
/** CommonMark's backslash escapes: a backslash before ASCII punctuation shows the character, never markup. */
const ESCAPABLE = /[!-/:-@[-`{-~]/;
/** What may stand next to a formatting marker: Slack needs a word boundary on the outside. */
const BOUNDARY = /[\s.,;:!?'"()[\]{}\/\\<>*_~`—–-]/;
const HEADING = /^(#{1,6})\s+(.*)$/;
const LIST_ITEM = /^(\s*)([•◦▪‣*-]|\d{1,3}[.)])\s+(.*)$/;
const MARKERS = [
  { token: '**', tag: 'strong', markdown: true, mrkdwn: true },
  { token: '~~', tag: 's', markdown: true, mrkdwn: false },
  { token: '*', tag: 'strong', markdown: false, mrkdwn: true },
  { token: '*', tag: 'em', markdown: true, mrkdwn: false },
  { token: '_', tag: 'em', markdown: true, mrkdwn: true },
  { token: '~', tag: 's', markdown: true, mrkdwn: true },
];

export function mrkdwnToHtml(text, ctx = {}, { markdown = false } = {}) {
  const options = { ctx, markdown };
  return renderText(String(text ?? ''), options);
}

/** Code blocks, then the lines between them: a block quote's content is read again from here. */
function renderText(text, options) {
  if (options.markdown && nestsTooDeep(text)) return text.split('\n').map((line) => inline(line, options)).join('<br>');
  if (options.markdown) return markdownBlocks(text).map((block) => ('code' in block ? preHtml(block.code) : renderLines(block.text, options))).join('');
  const out = [];
  let rest = text;
  while (rest.length > 0) {
    const start = rest.indexOf(FENCE);
    const end = start === -1 ? -1 : rest.indexOf(FENCE, start + FENCE.length);
    // An unclosed fence is literal in mrkdwn.
    if (start === -1 || end === -1) {
      out.push(renderLines(rest, options));
      break;
    }
    if (start > 0) out.push(renderLines(rest.slice(0, start).replace(/\n$/, ''), options));
    out.push(preHtml(rest.slice(start + FENCE.length, end).replace(/^\n/, '').replace(/\n$/, '')));
    rest = rest.slice(end + FENCE.length).replace(/^\n/, '');
  }
  return out.join('');
}

/** Plain text with `:emoji:` shortcodes shown as Slack shows them in `plain_text` with `emoji`. */
export function plainTextToHtml(text, { emoji = true } = {}) {
  const escaped = escapeHtml(String(text ?? ''));
  return emoji ? escaped.replace(/:([a-z0-9_+-]+):/g, (whole, name) => emojiFor(name) ?? whole) : escaped;
}

function preHtml(code) {
  return `<pre class="mk-pre">${escapeHtml(decodeSlackEntities(code))}</pre>`;
}

function renderLines(segment, options) {
  const lines = segment.split('\n');
  const parts = [];
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index];
    // Slack's quote of everything after it; in markdown, `>>>` is three quotes, one in the other.
    const rest = options.markdown ? null : /^(>>>|&gt;&gt;&gt;) ?/.exec(line);
    if (rest) {
      parts.push({ block: `<blockquote class="mk-quote">${renderText([line.slice(rest[0].length), ...lines.slice(index + 1)].join('\n'), options)}</blockquote>` });
      break;
    }
    if (/^(>|&gt;)/.test(line)) {
      const quoted = [];
      while (index < lines.length && /^(>|&gt;)/.test(lines[index])) quoted.push(lines[index++].replace(/^(>|&gt;) ?/, ''));
      index--;
      parts.push({ block: `<blockquote class="mk-quote">${renderText(quoted.join('\n'), options)}</blockquote>` });
      continue;
    }
    const heading = options.markdown ? HEADING.exec(line) : null;
    if (heading) {
      parts.push({ block: `<div class="mk-heading mk-h${heading[1].length}">${inline(heading[2], options)}</div>` });
      continue;
    }
    const item = LIST_ITEM.exec(line);
    if (item) {
      const level = Math.min(4, Math.floor(item[1].replace(/\t/g, '  ').length / 2));
      const marker = options.markdown && (item[2] === '-' || item[2] === '*') ? ['•', '◦', '▪'][level % 3] : item[2];
      parts.push({ block: `<div class="mk-li mk-indent-${level}"><span class="mk-marker">${escapeHtml(marker)}</span><span>${inline(item[3], options)}</span></div>` });
      continue;
    }
    if (options.markdown && line.trim() !== '') {
      // A paragraph's lines together: in markdown a code span may run from one line to the next.
      let last = index;
      while (last + 1 < lines.length && continuesParagraph(lines[last + 1])) last++;
      parts.push({ line: inline(lines.slice(index, last + 1).join('\n'), options) });
      index = last;
      continue;
    }
    parts.push({ line: inline(line, options) });
  }
  return parts.map((part, index) => ('block' in part ? part.block : `${part.line}${'line' in (parts[index + 1] ?? {}) ? '<br>' : ''}`)).join('');
}

/** Whether a markdown line goes on with the paragraph above it, rather than being blank or a block of its own. */
function continuesParagraph(line) {
  return line.trim() !== '' && !/^(>|&gt;)/.test(line) && !HEADING.test(line) && !LIST_ITEM.test(line);
}

function inline(text, options) {
  let out = '';
  for (let index = 0; index < text.length; ) {
    const character = text[index];
    if (character === '\n') {
      out += '<br>';
      index++;
      continue;
    }
    if (character === '\\' && options.markdown && ESCAPABLE.test(text[index + 1] ?? '')) {
      out += escapeHtml(text[index + 1]);
      index += 2;
      continue;
    }
    if (character === '`') {
      const span = codeSpan(text, index, options.markdown);
      if (span) {
        out += 'code' in span ? `<code class="mk-code">${escapeHtml(decodeSlackEntities(span.code))}</code>` : escapeHtml(span.literal);
        index = span.end;
        continue;
      }
    }
    if (character === '<') {
      const end = text.indexOf('>', index + 1);
      if (end > index + 1 && !text.slice(index, end).includes('\n')) {
        out += controlSequence(text.slice(index + 1, end), options.ctx);
        index = end + 1;
        continue;
      }
    }
    if (character === '[' && options.markdown) {
      const link = /^\[([^\]\n]+)\]\(([^)\s]+)\)/.exec(text.slice(index));
      if (link) {
        // The label as a reader sees it, escapes resolved, is what must not name another address.
        const label = decodeSlackEntities(link[1]).replace(/\\([!-/:-@[-`{-~])/g, '$1');
        out += labelledLinkHtml(decodeSlackEntities(link[2]), label, inline(link[1], options));
        index += link[0].length;
        continue;
      }
    }
    const styled = styledRun(text, index, options);
    if (styled) {
      out += styled.html;
      index = styled.next;
      continue;
    }
    const emoji = character === ':' ? /^:([a-z0-9_+-]+):/.exec(text.slice(index)) : null;
    if (emoji && (emojiFor(emoji[1]) || emoji[1].startsWith('skin-tone-'))) {
      out += emojiFor(emoji[1]) ?? '';
      index += emoji[0].length;
      continue;
    }
    const entity = character === '&' ? /^&(amp|lt|gt);/.exec(text.slice(index, index + 5)) : null;
    out += escapeHtml(entity ? decodeSlackEntities(entity[0]) : character);
    index += entity ? entity[0].length : 1;
  }
  return out;
}

/** `*bold*`, `_italic_`, `~strike~` (and markdown's `**`, `~~`, `*`) starting at `index`. */
function styledRun(text, index, options) {
  if (index > 0 && !BOUNDARY.test(text[index - 1])) return undefined;
  for (const marker of MARKERS) {
    if (!(options.markdown ? marker.markdown : marker.mrkdwn) || !text.startsWith(marker.token, index)) continue;
    const contentStart = index + marker.token.length;
    if (contentStart >= text.length || /\s/.test(text[contentStart]) || text.startsWith(marker.token, contentStart)) continue;
    const end = closingMarker(text, contentStart + 1, marker.token, options.markdown);
    if (end === -1) continue;
    return { html: `<${marker.tag}>${inline(text.slice(contentStart, end), options)}</${marker.tag}>`, next: end + marker.token.length };
  }
  return undefined;
}

function closingMarker(text, from, token, markdown) {
  for (let index = from; index < text.length; index++) {
    const character = text[index];
    if (character === '\n') return -1;
    // An escaped marker is a character of the run, not its end.
    if (markdown && character === '\\' && ESCAPABLE.test(text[index + 1] ?? '')) {
      index++;
      continue;
    }
    if (character === '`') {
      const span = codeSpan(text, index, markdown);
      if (span) {
        index = span.end - 1;
        continue;
      }
    }
    if (character === '<') {
      const end = text.indexOf('>', index + 1);
      if (end > index) {
        index = end;
        continue;
      }
    }
    const after = index + token.length;
    if (text.startsWith(token, index) && !/\s/.test(text[index - 1]) && (after >= text.length || BOUNDARY.test(text[after])) && text[after] !== token[0]) return index;
  }
  return -1;
}

/** `<@U…>`, `<#C…>`, `<!here>`, `<!date^…>`, `<url|label>`: whatever it is, the output is escaped. */
function controlSequence(body, ctx) {
  const bar = body.indexOf('|');
  const target = bar === -1 ? body : body.slice(0, bar);
  const label = bar === -1 ? undefined : decodeSlackEntities(body.slice(bar + 1));
  if (target.startsWith('@')) {
    const id = target.slice(1);
    const name = ctx.users?.[id] ?? label ?? id;
    return `<span class="mk-mention${id === ctx.actingUserId ? ' mk-mention-me' : ''}">@${escapeHtml(name)}</span>`;
  }
  if (target.startsWith('#')) {
    const name = ctx.channels?.[target.slice(1)] ?? label ?? target.slice(1);
    return `<span class="mk-channel">#${escapeHtml(name)}</span>`;
  }
  if (target.startsWith('!')) return special(target.slice(1), label, ctx);
  const url = decodeSlackEntities(target);
  return label === undefined ? linkHtml(url, escapeHtml(url)) : labelledLinkHtml(url, label);
}

/**
 * Code at a backtick: in markdown, CommonMark's span between equal runs of backticks (an unmatched
 * run is literal text); in mrkdwn, Slack's between single backticks.
 */
function codeSpan(text, index, markdown) {
  if (markdown) return codeSpanAt(text, index);
  const end = text.indexOf('`', index + 1);
  return end > index + 1 ? { code: text.slice(index + 1, end), end: end + 1 } : undefined;
}

function special(command, label, ctx) {
  if (['here', 'channel', 'everyone'].includes(command)) return `<span class="mk-mention mk-broadcast">@${command}</span>`;
  if (command.startsWith('subteam^')) {
    const id = command.slice('subteam^'.length);
    const handle = ctx.groups?.[id];
    return `<span class="mk-mention">${escapeHtml(handle ? `@${handle}` : (label ?? `@${id}`))}</span>`;
  }
  if (command.startsWith('date^')) {
    const [, seconds, format, link] = command.split('^');
    const shown = formatSlackDate(Number(seconds), decodeSlackEntities(format ?? ''), ctx) ?? label ?? '';
    const html = `<time class="mk-date" title="${escapeHtml(label ?? '')}">${escapeHtml(shown)}</time>`;
    return link ? linkHtml(decodeSlackEntities(link), html) : html;
  }
  return escapeHtml(label ?? `<!${command}>`);
}
