/** Moved to the product's Slack emulator; kept so existing imports work. */
export { closeServer, listenOnLoopback, readRequestBody, sendJson, type LoopbackServer } from '../../src/sandbox/emulator/loopback-http.js';
