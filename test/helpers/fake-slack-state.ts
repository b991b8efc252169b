import type { StoredMessage } from '../../src/sandbox/emulator/state/message-log.js';

/** The workspace state lives in the product's Slack emulator (src/sandbox/emulator). */
export {
  createWorkspaceState as createFakeSlackState,
  type SlackIdentity,
  type WorkspaceState as FakeSlackState,
} from '../../src/sandbox/emulator/state/workspace-state.js';
export type { StoredView as StoredSlackView } from '../../src/sandbox/emulator/state/view-stacks.js';

/** A stored message typed loosely, so tests can reach into the blocks the bot posted. */
export interface StoredSlackMessage extends Omit<StoredMessage, 'blocks' | 'metadata'> {
  blocks?: any[];
  metadata?: any;
}
