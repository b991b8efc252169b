/** The channel's top-level messages and a thread's replies, with ephemerals for whoever is acting. */
import { renderBlocks } from './blocks.js';
import { messageTime } from './dates.js';
import { escapeHtml } from './escape.js';
import { mrkdwnToHtml } from './mrkdwn.js';

/** What the channel shows: top-level messages, and the acting user's ephemerals outside threads. */
export function channelItems(snapshot, channelId, actingUserId) {
  const messages = snapshot.messages.filter((message) => message.channel === channelId && isTopLevel(message));
  return merged(messages, ephemeralsFor(snapshot, channelId, actingUserId, undefined));
}

export function threadItems(snapshot, channelId, threadTs, actingUserId) {
  const messages = snapshot.messages.filter((message) => message.channel === channelId && (message.ts === threadTs || message.threadTs === threadTs));
  return merged(messages, ephemeralsFor(snapshot, channelId, actingUserId, threadTs));
}

export function replyCount(snapshot, message) {
  return snapshot.messages.filter((reply) => reply.channel === message.channel && reply.threadTs === message.ts && reply.ts !== message.ts).length;
}

export function isTopLevel(message) {
  return message.threadTs === undefined || message.threadTs === message.ts;
}

function ephemeralsFor(snapshot, channelId, actingUserId, threadTs) {
  return snapshot.ephemerals.filter((ephemeral) => ephemeral.user === actingUserId && ephemeral.channel === channelId && ephemeral.threadTs === threadTs);
}

function merged(messages, ephemerals) {
  const items = [
    ...messages.map((message) => ({ kind: 'message', at: Number.parseFloat(message.ts) * 1000, message })),
    ...ephemerals.map((ephemeral) => ({ kind: 'ephemeral', at: ephemeral.at, ephemeral })),
  ];
  return items.sort((left, right) => left.at - right.at);
}

/** `options`: `{ inThread, snapshot, status(threadTs) }`. */
export function renderItems(items, ctx, options) {
  if (items.length === 0) return '<div class="timeline-empty">No messages yet. Mention the bot to start: <code>@' + escapeHtml(options.snapshot.workspace.botName) + ' restart the worker in staging</code></div>';
  return items.map((item) => (item.kind === 'message' ? renderMessage(item.message, ctx, options) : renderEphemeral(item.ephemeral, ctx, options))).join('');
}

function renderMessage(message, ctx, { inThread, snapshot, status }) {
  const workspace = snapshot.workspace;
  const fromBot = message.user === workspace.botUserId || (message.user === undefined && message.botId !== undefined);
  const author = fromBot ? workspace.botName : (ctx.users[message.user] ?? message.user ?? 'unknown');
  const threadTs = message.threadTs !== undefined && message.threadTs !== message.ts ? ` data-thread-ts="${escapeHtml(message.threadTs)}"` : '';
  const body = content(message, { ...ctx, formId: `m-${message.ts}` });
  const marks = `${message.streaming ? '<span class="msg-cursor" title="Streaming">▍</span>' : ''}${message.edited ? '<span class="msg-edited">(edited)</span>' : ''}`;
  let footer = '';
  if (!inThread && isTopLevel(message)) {
    const count = replyCount(snapshot, message);
    const working = status(message.ts);
    if (count > 0) footer += `<button type="button" class="msg-replies" data-open-thread="${escapeHtml(message.ts)}">${count} ${count === 1 ? 'reply' : 'replies'}</button>`;
    if (working) footer += `<div class="msg-status">${escapeHtml(workspace.botName)} ${escapeHtml(working)}</div>`;
  }
  const hover = !inThread ? `<div class="msg-hover"><button type="button" class="msg-hover-button" data-open-thread="${escapeHtml(message.ts)}" title="Reply in thread" aria-label="Reply in thread">💬</button></div>` : '';
  return (
    `<div class="msg${fromBot ? ' msg-bot' : ''}" data-container="message" data-ts="${escapeHtml(message.ts)}"${threadTs}>` +
    avatar(author, fromBot) +
    `<div class="msg-main">${meta(author, fromBot, messageTime(message.ts, ctx))}<div class="msg-body">${body}${marks}</div>${footer}</div>${hover}</div>`
  );
}

function renderEphemeral(ephemeral, ctx, { snapshot }) {
  const name = snapshot.workspace.botName;
  const body = content(ephemeral, { ...ctx, formId: `e-${ephemeral.id}` });
  const time = messageTime(String(ephemeral.at / 1000), ctx);
  return (
    `<div class="msg msg-ephemeral msg-bot" data-container="ephemeral" data-ephemeral-id="${escapeHtml(ephemeral.id)}">` +
    avatar(name, true) +
    `<div class="msg-main"><div class="msg-only-you">👁 Only visible to you</div>${meta(name, true, time)}<div class="msg-body">${body}</div></div></div>`
  );
}

function content(message, ctx) {
  if (Array.isArray(message.blocks) && message.blocks.length > 0) return renderBlocks(message.blocks, ctx);
  return `<div class="msg-text">${mrkdwnToHtml(message.text, ctx, { markdown: message.format === 'markdown' })}</div>`;
}

function meta(author, fromBot, time) {
  return `<div class="msg-meta"><span class="msg-author">${escapeHtml(author)}</span>${fromBot ? '<span class="msg-app">APP</span>' : ''}<span class="msg-time">${escapeHtml(time)}</span></div>`;
}

function avatar(name, fromBot) {
  const hue = [...String(name)].reduce((sum, character) => sum + character.charCodeAt(0), 0) % 6;
  return `<div class="msg-avatar avatar-${fromBot ? 'bot' : hue}" aria-hidden="true">${fromBot ? '🤖' : escapeHtml(String(name).charAt(0).toUpperCase())}</div>`;
}
