/** Moved to the product's Slack emulator; kept so existing imports work. */
export { WORKSPACE_METHODS } from '../../src/sandbox/emulator/web-api/workspace-methods.js';
