/** Slack's confirmation dialog for elements with `confirm`, shown before the action is sent. */
import { isRecord } from './escape.js';
import { plainTextToHtml } from './mrkdwn.js';
import { plainTextOf, textObjectHtml } from './text-object.js';

export function renderConfirm(confirm, ctx) {
  const style = isRecord(confirm) && confirm.style === 'danger' ? 'bk-btn-danger' : 'bk-btn-primary';
  const text = (object, fallback) => plainTextToHtml(plainTextOf(object) || fallback);
  return (
    `<div class="modal-backdrop confirm-backdrop"><div class="modal confirm" role="alertdialog" aria-modal="true" aria-labelledby="confirm-title">` +
    `<header class="modal-header"><h2 class="modal-title" id="confirm-title">${text(confirm?.title, 'Are you sure?')}</h2></header>` +
    `<div class="modal-body confirm-text">${confirm?.text !== undefined ? textObjectHtml(confirm.text, ctx) : ''}</div>` +
    `<footer class="modal-footer"><button type="button" class="bk-btn" data-confirm-deny>${text(confirm?.deny, 'Cancel')}</button>` +
    `<button type="button" class="bk-btn ${style}" data-confirm-ok>${text(confirm?.confirm, 'Yes')}</button></footer>` +
    `</div></div>`
  );
}
