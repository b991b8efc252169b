/**
 * Drives Bolt's real HTTP receiver the way Slack does: signed bodies and Slack's header names (the
 * product's Slack emulator does the signing). The payload builders are re-exported so tests import
 * one module.
 */
export { postSlackEvent, postSlackInteraction, postSlashCommand, slackSignature } from '../../src/sandbox/emulator/delivery/signed-request.js';
export { appHomeOpenedEnvelope, appMentionEnvelope, messageEnvelope } from './slack-event-envelopes.js';
export { blockActionsPayload, homeActionsPayload, viewSubmissionPayload } from './slack-interaction-payloads.js';
