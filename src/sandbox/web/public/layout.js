/** The page's frame, rendered once; app.js fills its regions from each snapshot. */

function composer(where, placeholder) {
  return (
    `<form class="composer" data-composer="${where}">` +
    `<textarea name="text" rows="1" placeholder="${placeholder}" aria-label="${placeholder}"></textarea>` +
    `<button type="submit" class="composer-send" aria-label="Send">➤</button>` +
    `<div class="composer-note" data-note hidden></div></form>`
  );
}

export function shellHtml() {
  return (
    `<div class="sandbox">` +
    `<div class="demo-banner" data-banner hidden>Demo model: no <code>OPENAI_API_KEY</code> is set, so a built-in model answers from keywords. Try “restart the worker in staging”, “scale api to 5 in prod” or “ask me which region”.</div>` +
    `<div class="connection" data-connection hidden>Connecting to the sandbox…</div>` +
    `<div class="workspace">` +
    `<nav class="sidebar" data-sidebar aria-label="Sidebar"></nav>` +
    `<main class="channel"><header class="channel-header" data-channel-header></header>` +
    `<div class="timeline" data-timeline="channel" aria-live="polite"></div>` +
    composer('channel', 'Message the channel') +
    `</main>` +
    `<aside class="thread" data-thread hidden><header class="thread-header"><div class="thread-title">Thread <span data-thread-channel></span></div>` +
    `<button type="button" class="thread-close" data-close-thread aria-label="Close thread">×</button></header>` +
    `<div class="timeline" data-timeline="thread" aria-live="polite"></div>` +
    `<div class="thread-status" data-thread-status hidden></div>` +
    composer('thread', 'Reply…') +
    `</aside></div>` +
    `<div data-modal-host></div><div data-dialog-host></div></div>`
  );
}
