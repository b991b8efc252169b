/**
 * Identifiers of the emulated workspace and generators for the ids Slack mints (event ids, trigger
 * ids). The defaults match the captured samples in shared/slack-samples, so a payload built without
 * options and the emulator agree on who the bot is.
 */
export const DEFAULT_TEAM_ID = 'T0A1B2C3D';
export const DEFAULT_BOT_USER_ID = 'U07OPSBOT1';
export const DEFAULT_BOT_ID = 'B07OPSBOT1';
export const API_APP_ID = 'A07OPSBOT1';
export const LEGACY_VERIFICATION_TOKEN = 'fake-verification-token';

let sequence = 0;

/** Unique per call, so generated event ids never trip the bot's event de-duplication. */
export function nextSequence(): number {
  sequence += 1;
  return sequence;
}

export { nextSlackTs as generatedTs } from './slack-ts-clock.js';

export function generatedEventId(): string {
  return `Ev${Date.now().toString(36).toUpperCase()}${String(nextSequence()).padStart(4, '0')}`;
}

export function generatedTriggerId(): string {
  return `${Date.now()}.4123456789012.fake${String(nextSequence()).padStart(8, '0')}`;
}
