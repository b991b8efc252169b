import type { PendingCall } from './pending-step.js';

/**
 * The choices an `ask_user` question offers as buttons, as stored with the call; none for a
 * free-text or form question. Such a question is answered with one of them and nothing else: the
 * card offers no Reply, and an answer outside them (a form submitted anyway) is refused.
 */
export function questionOptionsOf(call: Pick<PendingCall, 'input'>): readonly string[] {
  const options = typeof call.input === 'object' && call.input !== null ? (call.input as { options?: unknown }).options : undefined;
  return Array.isArray(options) ? options.filter((option): option is string => typeof option === 'string') : [];
}

/** Told to someone answering such a question other than with its buttons. */
export const CHOOSE_AN_OPTION_TEXT = 'This question is answered by choosing one of its options on the card, so nothing changed.';
