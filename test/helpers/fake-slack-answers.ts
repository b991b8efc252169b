/** Moved to the product's Slack emulator; kept so existing imports work. */
export {
  invalidBlocksAnswer,
  isMissing,
  slackError,
  textFromChunks,
  toSlackMessage,
  type SlackAnswer,
  type SlackMethodHandler,
} from '../../src/sandbox/emulator/web-api/method-answers.js';
