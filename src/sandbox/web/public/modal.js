/** A modal rendered from the view the bot sent to views.open / views.update / views.push. */
import { renderBlocks } from './blocks.js';
import { escapeHtml, isRecord } from './escape.js';
import { plainTextToHtml } from './mrkdwn.js';
import { plainTextOf } from './text-object.js';

/** `errors`: block_id → message, shown under those input blocks. */
export function renderModal(view, { viewId, errors = {} }, ctx = {}) {
  const text = (object, fallback) => plainTextToHtml(plainTextOf(object) || fallback, { emoji: !isRecord(object) || object.emoji !== false });
  const blocks = renderBlocks(view.blocks ?? [], { ...ctx, errors, formId: `view-${viewId}` });
  const submit = view.submit !== undefined ? `<button type="submit" class="bk-btn bk-btn-primary modal-submit" data-modal-submit>${text(view.submit, 'Submit')}</button>` : '';
  return (
    `<div class="modal-backdrop">` +
    `<form class="modal" role="dialog" aria-modal="true" aria-labelledby="modal-title-${escapeHtml(viewId)}" data-container="view" data-view-id="${escapeHtml(viewId)}" novalidate>` +
    `<header class="modal-header"><h2 class="modal-title" id="modal-title-${escapeHtml(viewId)}">${text(view.title, 'App')}</h2>` +
    `<button type="button" class="modal-x" data-modal-close aria-label="Close">×</button></header>` +
    `<div class="modal-body">${blocks}</div>` +
    `<footer class="modal-footer"><button type="button" class="bk-btn modal-cancel" data-modal-close>${text(view.close, submit ? 'Cancel' : 'Close')}</button>${submit}</footer>` +
    `</form></div>`
  );
}

/** Puts `errors` under the blocks of an open modal without touching its inputs. */
export function showModalErrors(modalRoot, errors = {}) {
  for (const node of modalRoot.querySelectorAll('[data-error-for]')) {
    const message = errors[node.getAttribute('data-error-for')];
    node.textContent = message ?? '';
    node.hidden = !message;
  }
}
