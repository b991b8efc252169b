/** Moved to the product's Slack emulator; kept so existing imports work. */
export { VIEW_METHODS } from '../../src/sandbox/emulator/web-api/view-methods.js';
