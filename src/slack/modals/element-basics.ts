import type { types } from '@slack/bolt';
import { SLACK_LIMITS } from '../blocks/limits.js';
import { hasInvisible, revealInvisible } from '../format/reveal-invisible.js';
import type { Variant } from './field-presence.js';

export type ElementWithoutActionId = DistributiveOmit<types.InputBlockElement, 'action_id'>;
type DistributiveOmit<Type, Key extends PropertyKey> = Type extends unknown ? Omit<Type, Key> : never;

/** Either the element that holds the value (without its action id), or why no element can. */
export type ElementChoice = { variant: Variant; element: ElementWithoutActionId } | { unfit: string };

export const TEXT_MAX_LENGTH = SLACK_LIMITS.plainTextInputMaxLength;
/**
 * Control characters and unpaired surrogates: Slack's text boxes would drop or change them, so a
 * string holding them is edited as a JSON string, whose escapes survive.
 */
const CHARACTERS_SLACK_CHANGES = /[\u0000-\u0008\u000B-\u001F\u007F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether a string must be edited as a JSON string rather than prefilled raw: Slack would change
 * it (control characters, unpaired surrogates), or it holds bidi overrides or zero-width
 * characters, which a text box renders, so the approver would read reordered text and approve it.
 * `jsonText` writes those as `\uXXXX`, as the card does.
 */
export function editedAsJson(text: string): boolean {
  return CHARACTERS_SLACK_CHANGES.test(text) || hasInvisible(text);
}

/**
 * Pretty JSON when it fits a text input, compact when only that fits, else undefined. Invisible and
 * reordering characters are written as `\uXXXX` (they only occur inside JSON strings, where that
 * escape reads back as the same character).
 */
export function jsonText(value: unknown): string | undefined {
  try {
    const pretty = JSON.stringify(value, null, 2);
    if (pretty === undefined) return undefined;
    const revealed = revealInvisible(pretty);
    if (revealed.length <= TEXT_MAX_LENGTH) return revealed;
    const compact = revealInvisible(JSON.stringify(value));
    return compact.length <= TEXT_MAX_LENGTH ? compact : undefined;
  } catch {
    return undefined;
  }
}

/** Any value as JSON text; the fallback that holds everything but the over-long. */
export function jsonElement(prefill: { value: unknown } | undefined): ElementChoice {
  const text = prefill === undefined ? undefined : jsonText(prefill.value);
  if (prefill !== undefined && text === undefined) return { unfit: unfitReason(prefill.value) };
  return { variant: 'json', element: { type: 'plain_text_input', multiline: true, max_length: TEXT_MAX_LENGTH, ...(text ? { initial_value: text } : {}) } };
}

export function option(text: string, value: string): types.PlainTextOption {
  return { text: { type: 'plain_text', text }, value };
}

/** Completes "<label> … ; it is kept unchanged." */
export function unfitReason(value: unknown): string {
  let length: number | undefined;
  try {
    length = typeof value === 'string' ? value.length : JSON.stringify(value)?.length;
  } catch {
    length = undefined;
  }
  return length === undefined ? 'cannot be shown here' : `is too long to edit here (${length.toLocaleString('en-US')} characters)`;
}
