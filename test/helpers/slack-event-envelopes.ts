/** Moved to the product's Slack emulator; kept so existing imports work. */
export { appMentionEnvelope, messageEnvelope } from '../../src/sandbox/emulator/delivery/event-envelopes.js';
