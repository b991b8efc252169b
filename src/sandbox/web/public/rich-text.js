/** `rich_text` blocks: sections, preformatted, quotes and lists, with their inline elements. */
import { formatSlackDate } from './dates.js';
import { emojiFor, emojiFromCodePoints } from './emoji.js';
import { escapeHtml, isRecord, jsonFallbackHtml } from './escape.js';
import { labelledLinkHtml } from './link-label.js';

export function renderRichText(block, ctx) {
  const elements = Array.isArray(block.elements) ? block.elements : [];
  return elements.map((element) => container(element, ctx)).join('');
}

function container(element, ctx) {
  if (!isRecord(element)) return jsonFallbackHtml(element, 'rich text element');
  switch (element.type) {
    case 'rich_text_section':
      return `<div class="rt-section">${inlines(element.elements, ctx)}</div>`;
    case 'rich_text_preformatted':
      return `<pre class="mk-pre rt-pre">${inlines(element.elements, ctx, { plain: true })}</pre>`;
    case 'rich_text_quote':
      return `<blockquote class="mk-quote rt-quote">${inlines(element.elements, ctx)}</blockquote>`;
    case 'rich_text_list': {
      const tag = element.style === 'ordered' ? 'ol' : 'ul';
      const indent = Math.min(4, Number.isInteger(element.indent) ? element.indent : 0);
      const start = tag === 'ol' && Number.isInteger(element.offset) ? ` start="${element.offset + 1}"` : '';
      const items = (Array.isArray(element.elements) ? element.elements : []).map((item) =>
        isRecord(item) && item.type === 'rich_text_section' ? `<li>${inlines(item.elements, ctx)}</li>` : `<li>${container(item, ctx)}</li>`,
      );
      return `<${tag} class="rt-list rt-${tag}-${indent % 3} mk-indent-${indent}"${start}>${items.join('')}</${tag}>`;
    }
    default:
      return jsonFallbackHtml(element, 'rich text element');
  }
}

function inlines(elements, ctx, { plain = false } = {}) {
  return (Array.isArray(elements) ? elements : []).map((element) => inline(element, ctx, plain)).join('');
}

function inline(element, ctx, plain) {
  if (!isRecord(element)) return jsonFallbackHtml(element, 'rich text element');
  const html = inlineContent(element, ctx);
  return plain || !isRecord(element.style) ? html : styled(html, element.style);
}

function inlineContent(element, ctx) {
  switch (element.type) {
    case 'text':
      return escapeHtml(element.text);
    case 'link':
      return labelledLinkHtml(element.url, element.text || element.url);
    case 'user': {
      const name = ctx.users?.[element.user_id] ?? element.user_id;
      return `<span class="mk-mention${element.user_id === ctx.actingUserId ? ' mk-mention-me' : ''}">@${escapeHtml(name)}</span>`;
    }
    case 'usergroup':
      return `<span class="mk-mention">@${escapeHtml(element.usergroup_id)}</span>`;
    case 'channel':
      return `<span class="mk-channel">#${escapeHtml(ctx.channels?.[element.channel_id] ?? element.channel_id)}</span>`;
    case 'broadcast':
      return `<span class="mk-mention mk-broadcast">@${escapeHtml(element.range)}</span>`;
    case 'emoji':
      return escapeHtml(emojiFromCodePoints(element.unicode) ?? emojiFor(element.name) ?? `:${element.name}:`);
    case 'date':
      return `<time class="mk-date">${escapeHtml(formatSlackDate(Number(element.timestamp), element.format ?? '{date_short}', ctx) ?? element.fallback ?? '')}</time>`;
    case 'color':
      return `<span class="rt-color">${escapeHtml(element.value)}</span>`;
    default:
      return jsonFallbackHtml(element, 'rich text element');
  }
}

function styled(html, style) {
  let out = html;
  if (style.code) out = `<code class="mk-code">${out}</code>`;
  if (style.bold) out = `<strong>${out}</strong>`;
  if (style.italic) out = `<em>${out}</em>`;
  if (style.strike) out = `<s>${out}</s>`;
  if (style.underline) out = `<u>${out}</u>`;
  return out;
}
