import type { StoredMessage } from '../../src/sandbox/emulator/state/message-log.js';
import type { WorkspaceState } from '../../src/sandbox/emulator/state/workspace-state.js';

/** Moved to the product's Slack emulator; kept so existing imports work. */
export { MESSAGE_METHODS } from '../../src/sandbox/emulator/web-api/message-methods.js';

export function threadMessages(options: { state: WorkspaceState; channel: string; threadTs: string }): StoredMessage[] {
  return options.state.messages.thread({ channel: options.channel, threadTs: options.threadTs });
}
