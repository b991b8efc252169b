/** The sidebar: channels, and the user switcher ("act as") with each user's role. */
import { escapeHtml } from './escape.js';

export function renderSidebar(snapshot, { actingUserId, channelId }) {
  const workspace = snapshot.workspace;
  const channels = workspace.channels
    .map((channel) => {
      const current = channel.id === channelId;
      return `<button type="button" class="sb-item${current ? ' sb-current' : ''}" data-channel="${escapeHtml(channel.id)}"${current ? ' aria-current="page"' : ''}># ${escapeHtml(channel.name)}</button>`;
    })
    .join('');
  const users = workspace.users
    .map((user) => {
      const current = user.id === actingUserId;
      return (
        `<button type="button" class="sb-item sb-user${current ? ' sb-current' : ''}" data-act-as="${escapeHtml(user.id)}" aria-pressed="${current}">` +
        `<span class="sb-user-name">@${escapeHtml(user.name)}${current ? ' <span class="sb-you">(you)</span>' : ''}</span>` +
        `<span class="sb-user-role">${escapeHtml(user.role)}</span></button>`
      );
    })
    .join('');
  return (
    `<div class="sb-workspace">countersign sandbox</div>` +
    `<div class="sb-section"><div class="sb-heading">Channels</div>${channels}</div>` +
    `<div class="sb-section"><div class="sb-heading">Act as</div>${users}</div>` +
    `<div class="sb-section"><div class="sb-heading">Apps</div><div class="sb-item sb-static">🤖 ${escapeHtml(workspace.botName)}</div></div>`
  );
}
