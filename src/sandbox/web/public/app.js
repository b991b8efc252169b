/**
 * The sandbox page: renders each snapshot from the server and sends what the person does. It holds
 * only view state (who is acting, which channel and thread are open, errors of the last submit).
 * Everything from outside is injected, so tests run it against a stub.
 */
import { actionRequest, findActionTarget } from './actions.js';
import { createApi, subscribe } from './api.js';
import { renderContext } from './block-kit.js';
import { composed } from './compose.js';
import { renderConfirm } from './dialog.js';
import { escapeHtml } from './escape.js';
import { settleSelections } from './inputs.js';
import { shellHtml } from './layout.js';
import { channelItems, renderItems, threadItems } from './messages.js';
import { showModalErrors } from './modal.js';
import { optionsOf, reportedOption } from './text-object.js';
import { createModalHost } from './modal-host.js';
import { permalinkTarget, threadOf } from './permalinks.js';
import { renderSidebar } from './sidebar.js';
import { collectStateValues, readControl, selectedForAction } from './state-values.js';
import { validateStateValues } from './validate-inputs.js';

const USER_KEY = 'countersign-sandbox-user';

export function startApp({ root, fetch, EventSource, storage, open = () => {}, location, timeZone, now }) {
  const api = createApi(fetch);
  const ui = {
    snapshot: undefined,
    actingUserId: storage?.getItem(USER_KEY) ?? undefined,
    channelId: undefined,
    threadTs: undefined,
    /** Opened at a permalink (`/archives/C…/p…`): that thread opens once its message is there. */
    linkedFrom: location ? permalinkTarget(location.href, location.origin) : undefined,
    /** By view id: errors of the last submit (the client's own checks or the bot's answer). */
    submitErrors: new Map(),
    /** Views closed here that the snapshot may not have dropped yet. */
    closedViews: new Set(),
    /** The action waiting for its confirm dialog. */
    confirming: undefined,
  };
  root.innerHTML = shellHtml();
  const region = (name) => root.querySelector(`[${name}]`);
  const modals = createModalHost(region('data-modal-host'));
  const written = new Map();

  const ctx = () => renderContext(ui.snapshot, { actingUserId: ui.actingUserId, timeZone, now });
  const status = (threadTs) => ui.snapshot.statuses?.[`${ui.channelId}:${threadTs}`];

  function apply(snapshot) {
    ui.snapshot = snapshot;
    const { users, channels } = snapshot.workspace;
    if (!users.some((user) => user.id === ui.actingUserId)) ui.actingUserId = users[0]?.id;
    if (!channels.some((channel) => channel.id === ui.channelId)) ui.channelId = channels[0]?.id;
    for (const viewId of ui.closedViews) if (!snapshot.views.some((view) => view.viewId === viewId)) ui.closedViews.delete(viewId);
    if (ui.linkedFrom !== undefined && followPermalink(ui.linkedFrom)) ui.linkedFrom = undefined;
    render();
  }

  /** Opens the thread a permalink points into; false when that message is not (yet) there. */
  function followPermalink(target) {
    const threadTs = threadOf(ui.snapshot, target);
    if (threadTs === undefined) return false;
    ui.channelId = target.channel;
    ui.threadTs = threadTs;
    return true;
  }

  /** Replaces a region's HTML only when it changed, keeping the reader's scroll position. */
  function write(node, html) {
    if (written.get(node) === html) return;
    written.set(node, html);
    const atBottom = node.scrollHeight - node.scrollTop - node.clientHeight < 40;
    const top = node.scrollTop;
    node.innerHTML = html;
    settleSelections(node);
    node.scrollTop = atBottom ? node.scrollHeight : top;
  }

  function render() {
    const snapshot = ui.snapshot;
    if (!snapshot) return;
    const context = ctx();
    const channel = snapshot.workspace.channels.find((candidate) => candidate.id === ui.channelId);
    region('data-banner').hidden = snapshot.workspace.demoModel !== true;
    write(region('data-sidebar'), renderSidebar(snapshot, ui));
    write(region('data-channel-header'), `<span class="channel-name"># ${escapeHtml(channel?.name ?? '')}</span><span class="channel-acting">acting as @${escapeHtml(context.users[ui.actingUserId] ?? '')}</span>`);
    root.querySelector('[data-composer="channel"] textarea').placeholder = `Message #${channel?.name ?? ''}`;
    write(region('data-timeline="channel"'), renderItems(channelItems(snapshot, ui.channelId, ui.actingUserId), context, { inThread: false, snapshot, status }));
    const thread = region('data-thread');
    thread.hidden = ui.threadTs === undefined;
    if (ui.threadTs !== undefined) {
      region('data-thread-channel').textContent = `#${channel?.name ?? ''}`;
      write(region('data-timeline="thread"'), renderItems(threadItems(snapshot, ui.channelId, ui.threadTs, ui.actingUserId), context, { inThread: true, snapshot, status }));
      const working = status(ui.threadTs);
      region('data-thread-status').hidden = !working;
      region('data-thread-status').textContent = working ? `${snapshot.workspace.botName} ${working}` : '';
    }
    const entry = snapshot.views.filter((view) => view.user === ui.actingUserId && !ui.closedViews.has(view.viewId)).at(-1);
    modals.show(entry, entry && (ui.submitErrors.get(entry.viewId) ?? entry.errors ?? {}), context);
  }

  function note(form, message) {
    const node = (form ?? root.querySelector('[data-composer="channel"]')).querySelector('[data-note]');
    node.textContent = message ?? '';
    node.hidden = !message;
  }

  function failed(form) {
    return (error) => note(form, `The sandbox refused that: ${error instanceof Error ? error.message : String(error)}`);
  }

  async function sendComposer(form) {
    const textarea = form.querySelector('textarea');
    const typed = textarea.value.trim();
    if (typed === '' || !ui.snapshot) return;
    const threadTs = form.getAttribute('data-composer') === 'thread' ? ui.threadTs : undefined;
    const outgoing = composed(typed, { workspace: ui.snapshot.workspace, user: ui.actingUserId, channel: ui.channelId, threadTs });
    if (outgoing.refused) return note(form, outgoing.refused);
    textarea.value = '';
    note(form);
    try {
      if (outgoing.command) return void (await api.command(outgoing.command));
      const answer = await api.postMessage(outgoing.message);
      // A question to the bot is answered in its thread: open it, as a newcomer would look there.
      if (!threadTs && outgoing.mentionsBot && typeof answer?.ts === 'string') openThread(answer.ts);
    } catch (error) {
      textarea.value = typed;
      failed(form)(error);
    }
  }

  function openThread(threadTs) {
    ui.threadTs = threadTs;
    render();
    root.querySelector('[data-composer="thread"] textarea').focus();
  }

  function act(node, selected) {
    const target = findActionTarget(node, ui.snapshot, ui.channelId);
    if (!target) return;
    const request = actionRequest(target, ui.actingUserId, selected);
    if (target.element.confirm) {
      ui.confirming = { request, url: target.elementNode.getAttribute('data-url') };
      region('data-dialog-host').innerHTML = renderConfirm(target.element.confirm, ctx());
      return void region('data-dialog-host').querySelector('[data-confirm-ok]')?.focus();
    }
    send({ request, url: target.elementNode.getAttribute('data-url') });
  }

  function send({ request, url }) {
    if (url) open(url, '_blank', 'noopener,noreferrer');
    api.action(request).catch(failed());
  }

  function closeConfirm(confirmed) {
    const pending = ui.confirming;
    ui.confirming = undefined;
    region('data-dialog-host').innerHTML = '';
    if (confirmed && pending) send(pending);
  }

  function closeModal() {
    const entry = modals.entry;
    if (!entry) return;
    ui.closedViews.add(entry.viewId);
    render();
    api.closeView({ viewId: entry.viewId, user: ui.actingUserId }).catch(failed());
  }

  async function submitModal(form) {
    const entry = modals.entry;
    if (!entry) return;
    const values = collectStateValues(form, entry.view.blocks);
    const invalid = validateStateValues(entry.view.blocks, values);
    ui.submitErrors.set(entry.viewId, invalid);
    showModalErrors(form, invalid);
    if (Object.keys(invalid).length > 0) return;
    const button = form.querySelector('[data-modal-submit]');
    if (button) button.disabled = true;
    try {
      const answer = await api.submitView({ user: ui.actingUserId, viewId: entry.viewId, values });
      if (answer.outcome === 'errors') {
        ui.submitErrors.set(entry.viewId, answer.errors);
        if (modals.entry?.viewId === entry.viewId) showModalErrors(form, answer.errors);
      } else {
        ui.submitErrors.delete(entry.viewId);
        if (answer.outcome === 'closed') ui.closedViews.add(entry.viewId);
        render();
      }
    } catch (error) {
      failed()(error);
    } finally {
      if (button) button.disabled = false;
    }
  }

  root.addEventListener('click', (event) => {
    const node = elementOf(event.target);
    const hit = (selector) => node?.closest(selector);
    const link = hit('a[href]');
    const permalink = link && location ? permalinkTarget(link.getAttribute('href'), location.origin) : undefined;
    if (permalink && ui.snapshot && followPermalink(permalink)) {
      event.preventDefault();
      return render();
    }
    if (hit('[data-confirm-ok]')) return closeConfirm(true);
    if (hit('[data-confirm-deny]')) return closeConfirm(false);
    if (hit('[data-modal-close]')) return closeModal();
    if (hit('[data-kind="button"]')) return act(hit('[data-kind="button"]'));
    const option = hit('[data-kind="overflow"]');
    if (option) {
      option.closest('details')?.removeAttribute('open');
      const target = findActionTarget(option, ui.snapshot, ui.channelId);
      return act(option, target && optionAt(target.element, Number(option.getAttribute('data-option'))));
    }
    const user = hit('[data-act-as]');
    if (user) {
      ui.actingUserId = user.getAttribute('data-act-as');
      storage?.setItem(USER_KEY, ui.actingUserId);
      return render();
    }
    const channel = hit('[data-channel]');
    if (channel) {
      ui.channelId = channel.getAttribute('data-channel');
      ui.threadTs = undefined;
      return render();
    }
    if (hit('[data-open-thread]')) return openThread(hit('[data-open-thread]').getAttribute('data-open-thread'));
    if (hit('[data-close-thread]')) {
      ui.threadTs = undefined;
      return render();
    }
  });

  root.addEventListener('change', (event) => {
    const control = elementOf(event.target)?.closest('[data-kind="control"]');
    if (!control || !ui.snapshot) return;
    const target = findActionTarget(control, ui.snapshot, ui.channelId);
    if (target) act(control, selectedForAction(readControl(control, target.element)));
  });

  root.addEventListener('submit', (event) => {
    event.preventDefault();
    const form = event.target;
    if (form.matches('[data-composer]')) return void sendComposer(form);
    if (form.matches('form.modal')) return void submitModal(form);
  });

  root.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && ui.confirming) return closeConfirm(false);
    if (event.key === 'Escape' && modals.entry) return closeModal();
    const form = elementOf(event.target)?.closest('[data-composer]');
    if (form && event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      void sendComposer(form);
    }
  });

  api.state().then((snapshot) => ui.snapshot === undefined && apply(snapshot)).catch(() => {});
  const unsubscribe = subscribe(EventSource, apply, (connected) => {
    region('data-connection').hidden = connected;
  });
  return { ui, render, stop: unsubscribe };
}

function optionAt(element, index) {
  const option = optionsOf(element)[index];
  return option === undefined ? undefined : reportedOption(option);
}

/** Event targets that are elements (no global `Element`, so the app also runs inside a test's own window). */
function elementOf(target) {
  return typeof target?.closest === 'function' ? target : undefined;
}
