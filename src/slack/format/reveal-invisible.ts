/**
 * Invisible or reordering characters (bidi overrides, zero-width marks). Slack renders them, so
 * untrusted text holding them could read as something other than what it is ("rm -rf /" written
 * backwards after U+202E reads harmlessly).
 */
const INVISIBLE_CHARACTERS = /[\u00AD\u061C\u180E\u200B-\u200F\u2028-\u202E\u2060-\u206F\uFEFF]/g;

/**
 * `text` with each invisible or reordering character written as `\uXXXX`, so an approver sees the
 * input the tool will get, not a string rearranged to look harmless. Inside a JSON string the
 * escape is valid JSON for the same character.
 */
export function revealInvisible(text: string): string {
  return text.replace(INVISIBLE_CHARACTERS, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const INVISIBLE_CHARACTER = new RegExp(INVISIBLE_CHARACTERS.source);

/** Whether `revealInvisible` would change `text`. */
export function hasInvisible(text: string): boolean {
  return INVISIBLE_CHARACTER.test(text);
}
