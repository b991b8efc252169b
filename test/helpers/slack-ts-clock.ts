/** Moved to the product's Slack emulator; kept so existing imports work. */
export { advanceSlackTsPast, compareSlackTs, nextSlackTs } from '../../src/sandbox/emulator/slack-ts-clock.js';
