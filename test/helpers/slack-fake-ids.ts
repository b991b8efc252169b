/** Moved to the product's Slack emulator; kept so existing imports work. */
export {
  API_APP_ID,
  DEFAULT_BOT_ID,
  DEFAULT_BOT_USER_ID,
  DEFAULT_TEAM_ID,
  LEGACY_VERIFICATION_TOKEN,
  generatedEventId,
  generatedTriggerId,
  generatedTs,
  nextSequence,
} from '../../src/sandbox/emulator/slack-ids.js';
