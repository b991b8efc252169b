/** Block Kit text objects (`plain_text`, `mrkdwn`) and the ids Slack fills in when a block has none. */
import { isRecord, jsonFallbackHtml } from './escape.js';
import { mrkdwnToHtml, plainTextToHtml } from './mrkdwn.js';

export function textObjectHtml(text, ctx) {
  if (typeof text === 'string') return plainTextToHtml(text);
  if (isRecord(text) && text.type === 'mrkdwn') return mrkdwnToHtml(text.text, ctx);
  if (isRecord(text) && text.type === 'plain_text') return plainTextToHtml(text.text, { emoji: text.emoji !== false });
  return jsonFallbackHtml(text, 'text object');
}

/** The text a person reads, for titles and labels that take plain text only. */
export function plainTextOf(text) {
  return isRecord(text) && typeof text.text === 'string' ? text.text : typeof text === 'string' ? text : '';
}

/** Slack gives a block without `block_id` one of its own; the sandbox's is its position. */
export function blockIdOf(block, index) {
  return isRecord(block) && typeof block.block_id === 'string' && block.block_id !== '' ? block.block_id : `sandbox_block_${index}`;
}

export function actionIdOf(element, index) {
  return isRecord(element) && typeof element.action_id === 'string' && element.action_id !== '' ? element.action_id : `sandbox_action_${index}`;
}

/** Menus may list `options` or `option_groups`; either way, one flat list (indexes are their DOM values). */
export function optionsOf(element) {
  if (Array.isArray(element.options)) return element.options.filter(isRecord);
  if (Array.isArray(element.option_groups)) return element.option_groups.flatMap((group) => (isRecord(group) && Array.isArray(group.options) ? group.options.filter(isRecord) : []));
  return [];
}

/** An option as Slack reports it in `state.values` and `block_actions`: its text gets `emoji: true`. */
export function reportedOption(option) {
  const text = isRecord(option.text) && option.text.type === 'plain_text' ? { ...option.text, emoji: true } : option.text;
  return { text, value: option.value, ...(option.description !== undefined ? { description: option.description } : {}) };
}

export function sameOption(left, right) {
  return isRecord(left) && isRecord(right) && left.value === right.value;
}
