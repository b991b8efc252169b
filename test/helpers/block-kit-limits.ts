/** Moved to the product's Slack emulator; kept so existing imports work. */
export { MESSAGE_BLOCKS_MAX, VIEW_BLOCKS_MAX, blockKitProblems } from '../../src/sandbox/emulator/web-api/block-kit-limits.js';
