/**
 * Interactive elements in messages and section accessories: buttons (with `primary`/`danger` and
 * `confirm`), overflow menus, images, and menus or pickers that send an action when changed.
 * Each carries `data-bi`/`data-ei` (block and element index) for the app to find it in the snapshot.
 */
import { escapeHtml, isRecord, jsonFallbackHtml, safeHttpUrl } from './escape.js';
import { INPUT_ELEMENT_TYPES, renderControl } from './inputs.js';
import { optionsOf, plainTextOf, textObjectHtml } from './text-object.js';

/** `where`: `{ blockIndex, elementIndex }` (elementIndex is `'accessory'` for a section's). */
export function renderElement(element, where, ctx) {
  if (!isRecord(element)) return jsonFallbackHtml(element, 'element');
  const attributes = ` data-bi="${where.blockIndex}" data-ei="${escapeHtml(where.elementIndex)}"${element.confirm ? ' data-confirm="true"' : ''}`;
  switch (element.type) {
    case 'button':
      return button(element, attributes, ctx);
    case 'overflow':
      return overflow(element, attributes, ctx);
    case 'image':
      return imageElement(element, 'bk-image-element');
    default: {
      if (!INPUT_ELEMENT_TYPES.has(element.type)) return jsonFallbackHtml(element, 'element');
      const id = `${ctx.formId ?? 'bk'}-${where.blockIndex}-${where.elementIndex}`;
      return `<span class="bk-inline-control">${renderControl(element, { id, attributes: `${attributes} data-kind="control"` }, ctx)}</span>`;
    }
  }
}

function button(element, attributes, ctx) {
  const style = element.style === 'primary' || element.style === 'danger' ? ` bk-btn-${element.style}` : '';
  const url = safeHttpUrl(element.url);
  const label = element.accessibility_label ? ` aria-label="${escapeHtml(element.accessibility_label)}"` : '';
  return `<button type="button" class="bk-btn${style}" data-kind="button"${attributes}${url ? ` data-url="${escapeHtml(url)}"` : ''}${label}>${textObjectHtml(element.text, ctx)}</button>`;
}

function overflow(element, attributes, ctx) {
  const items = optionsOf(element).map(
    (option, index) => `<button type="button" class="bk-menu-item" data-kind="overflow" data-option="${index}"${attributes}>${textObjectHtml(option.text, ctx)}</button>`,
  );
  return `<details class="bk-overflow"><summary class="bk-btn bk-overflow-button" aria-label="More actions">⋯</summary><div class="bk-menu">${items.join('')}</div></details>`;
}

/** Only http(s) images load; anything else shows its alt text. */
export function imageElement(element, className) {
  const alt = escapeHtml(typeof element.alt_text === 'string' ? element.alt_text : plainTextOf(element.title));
  const url = safeHttpUrl(element.image_url);
  if (url === undefined) return `<span class="${className} bk-image-missing" title="${alt}">🖼 ${alt}</span>`;
  return `<img class="${className}" src="${escapeHtml(url)}" alt="${alt}" loading="lazy" referrerpolicy="no-referrer">`;
}
