/**
 * The open modal. A snapshot that brings the same view again only refreshes its errors, so what
 * the person is typing (and which input has focus) survives live updates.
 */
import { settleSelections } from './inputs.js';
import { renderModal, showModalErrors } from './modal.js';

export function createModalHost(host) {
  let shown;
  return {
    /** `entry`: the `SandboxView` to show (or undefined to close); `errors`: block_id → message. */
    show(entry, errors, ctx) {
      if (entry === undefined) {
        if (shown !== undefined) host.innerHTML = '';
        shown = undefined;
        return;
      }
      const key = `${entry.user}\n${entry.viewId}\n${JSON.stringify(entry.view)}`;
      if (shown?.key === key) return showModalErrors(host, errors);
      host.innerHTML = renderModal(entry.view, { viewId: entry.viewId, errors }, ctx);
      settleSelections(host);
      shown = { key, entry };
      host.querySelector('.modal-body input, .modal-body textarea, .modal-body select')?.focus();
    },
    get entry() {
      return shown?.entry;
    },
    form() {
      return host.querySelector('form.modal');
    },
  };
}
