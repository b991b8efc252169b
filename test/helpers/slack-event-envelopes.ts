/** Moved to the product's Slack emulator; kept so existing imports work. */
export { appHomeOpenedEnvelope, appMentionEnvelope, messageEnvelope } from '../../src/sandbox/emulator/delivery/event-envelopes.js';
