/**
 * The Block Kit renderer: pure functions from the bot's JSON to HTML strings, with every piece of
 * text escaped. Build a context from the snapshot with `renderContext`.
 */
export { renderBlock, renderBlocks } from './blocks.js';
export { renderElement } from './elements.js';
export { mrkdwnToHtml, plainTextToHtml } from './mrkdwn.js';
export { renderModal, showModalErrors } from './modal.js';
export { settleSelections } from './inputs.js';
export { collectStateValues, readControl } from './state-values.js';
export { textObjectHtml } from './text-object.js';
export { validateStateValues } from './validate-inputs.js';

/** Names for mentions (`<@U…>` → @alice, the bot by its name), channels, and whose screen it is. */
export function renderContext(snapshot, { actingUserId, formId, timeZone, now } = {}) {
  const workspace = snapshot?.workspace ?? {};
  const users = Object.fromEntries((workspace.users ?? []).map((user) => [user.id, user.name]));
  if (workspace.botUserId) users[workspace.botUserId] = workspace.botName ?? 'bot';
  const channels = Object.fromEntries((workspace.channels ?? []).map((channel) => [channel.id, channel.name]));
  // Not in sandbox-api.ts yet: user groups (`<!subteam^S…>`) by handle, when the server sends them.
  const groups = Object.fromEntries((workspace.usergroups ?? []).map((group) => [group.id, group.handle]));
  return { users, channels, groups, actingUserId, formId, timeZone, now };
}
