/**
 * Block Kit blocks to HTML strings. What it does not know is shown as JSON, never dropped.
 * `ctx` (see block-kit.js `renderContext`) carries names for mentions, the form id for controls,
 * and, in modals, `errors` (block_id → message).
 */
import { escapeHtml, isRecord, jsonFallbackHtml } from './escape.js';
import { imageElement, renderElement } from './elements.js';
import { renderControl } from './inputs.js';
import { mrkdwnToHtml } from './mrkdwn.js';
import { renderRichText } from './rich-text.js';
import { blockIdOf, plainTextOf, textObjectHtml } from './text-object.js';

const BLOCKS = {
  section(block, index, ctx) {
    const text = block.text !== undefined ? `<div class="bk-section-text">${textObjectHtml(block.text, ctx)}</div>` : '';
    const fields = Array.isArray(block.fields) ? `<div class="bk-fields">${block.fields.map((field) => `<div class="bk-field">${textObjectHtml(field, ctx)}</div>`).join('')}</div>` : '';
    const accessory = block.accessory !== undefined ? `<div class="bk-accessory">${accessoryHtml(block.accessory, index, ctx)}</div>` : '';
    return `<div class="bk-section-body">${text}${fields}</div>${accessory}`;
  },
  context(block, index, ctx) {
    const elements = Array.isArray(block.elements) ? block.elements : [];
    return elements
      .map((element) => (isRecord(element) && element.type === 'image' ? imageElement(element, 'bk-context-image') : `<span class="bk-context-text">${textObjectHtml(element, ctx)}</span>`))
      .join('');
  },
  divider: () => '<hr class="bk-rule">',
  header: (block, index, ctx) => `<div class="bk-header-text">${textObjectHtml(block.text, ctx)}</div>`,
  actions(block, index, ctx) {
    const elements = Array.isArray(block.elements) ? block.elements : [];
    return elements.map((element, elementIndex) => renderElement(element, { blockIndex: index, elementIndex }, ctx)).join('');
  },
  markdown: (block, index, ctx) => mrkdwnToHtml(block.text, ctx, { markdown: true }),
  rich_text: (block, index, ctx) => renderRichText(block, ctx),
  image(block) {
    const title = block.title !== undefined ? `<div class="bk-image-title">${escapeHtml(plainTextOf(block.title))}</div>` : '';
    return `${title}${imageElement(block, 'bk-image')}`;
  },
  input(block, index, ctx) {
    const id = `${ctx.formId ?? 'bk'}-${index}`;
    const control = isRecord(block.element) ? renderControl(block.element, { id }, ctx) : undefined;
    const optional = block.optional === true ? ' <span class="bk-optional">(optional)</span>' : '';
    const hint = block.hint !== undefined ? `<div class="bk-hint">${textObjectHtml(block.hint, ctx)}</div>` : '';
    const blockId = blockIdOf(block, index);
    const error = ctx.errors?.[blockId];
    return (
      `<label class="bk-label" for="${escapeHtml(id)}">${escapeHtml(plainTextOf(block.label))}${optional}</label>` +
      (control ?? jsonFallbackHtml(block.element, 'input element')) +
      hint +
      `<div class="bk-error" role="alert" data-error-for="${escapeHtml(blockId)}"${error ? '' : ' hidden'}>${escapeHtml(error ?? '')}</div>`
    );
  },
};

function accessoryHtml(accessory, index, ctx) {
  if (isRecord(accessory) && accessory.type === 'image') return imageElement(accessory, 'bk-accessory-image');
  return renderElement(accessory, { blockIndex: index, elementIndex: 'accessory' }, ctx);
}

export function renderBlocks(blocks, ctx = {}) {
  if (!Array.isArray(blocks)) return jsonFallbackHtml(blocks, 'block list');
  return blocks.map((block, index) => renderBlock(block, index, ctx)).join('');
}

export function renderBlock(block, index, ctx = {}) {
  if (!isRecord(block) || !Object.hasOwn(BLOCKS, block.type)) return `<div class="bk-block" data-block-index="${index}">${jsonFallbackHtml(block, 'block')}</div>`;
  const blockId = typeof block.block_id === 'string' ? ` data-block-id="${escapeHtml(block.block_id)}"` : '';
  return `<div class="bk-block bk-block-${block.type}" data-block-index="${index}"${blockId}>${BLOCKS[block.type](block, index, ctx)}</div>`;
}
