/** Moved to the product's Slack emulator; kept so existing imports work. */
export { STREAM_METHODS } from '../../src/sandbox/emulator/web-api/stream-methods.js';
