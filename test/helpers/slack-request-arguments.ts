/** Moved to the product's Slack emulator; kept so existing imports work. */
export { parseSlackRequestArguments, type SlackRequestArguments } from '../../src/sandbox/emulator/web-api/slack-request-arguments.js';
