import type { types } from '@slack/bolt';
import { SLACK_LIMITS, truncateText } from '../blocks/limits.js';
import { chooseElement, demandsInput } from './field-element.js';
import { LABEL_LENGTH, plainText } from './field-labels.js';
import { encodeActionId, type Presence } from './field-presence.js';
import type { FormField } from './form-field.js';

const NOTE_LENGTH = 300;
/** The longest reason a field is kept for, to size the worst case. */
const LONGEST_KEPT_REASON = 'is too long to edit here (9,999,999,999 characters)';

/**
 * The block for one field: an input prefilled with `prefill`, a heading for a group, or, when the
 * value cannot fit any input, a note that it is kept unchanged (the parser then takes it from the
 * original value).
 */
export function renderField({ field, presences, prefill }: { field: FormField; presences: readonly Presence[]; prefill?: { value: unknown } }): types.KnownBlock {
  if (field.control.kind === 'group') return renderGroupHeading(field);
  const choice = chooseElement(field, prefill);
  if ('unfit' in choice) return renderKeptField({ field, reason: choice.unfit });
  const label = choice.variant === 'json' && field.control.kind !== 'rest' ? `${truncateText(field.label, LABEL_LENGTH - 7)} (JSON)` : field.label;
  const block: types.InputBlock = {
    type: 'input',
    block_id: field.blockId,
    optional: !demandsInput(field),
    label: { type: 'plain_text', text: label },
    ...(field.hint !== undefined ? { hint: { type: 'plain_text', text: field.hint } } : {}),
    element: { ...choice.element, action_id: encodeActionId({ variant: choice.variant, presences }) } as types.InputBlockElement,
  };
  return block;
}

/** Top-level objects get a header; deeper ones, or ones with a description, a quieter context line. */
function renderGroupHeading(field: FormField): types.KnownBlock {
  if (field.path.length === 1 && field.hint === undefined) {
    return { type: 'header', block_id: field.blockId, text: { type: 'plain_text', text: plainText(field.label, SLACK_LIMITS.headerTextLength) } };
  }
  const text = field.hint === undefined ? field.label : `${field.label} — ${field.hint}`;
  return { type: 'context', block_id: field.blockId, elements: [{ type: 'plain_text', text: plainText(text, NOTE_LENGTH) }] };
}

export function renderKeptField({ field, reason }: { field: FormField; reason: string }): types.KnownBlock {
  return {
    type: 'context',
    block_id: field.blockId,
    elements: [{ type: 'plain_text', text: plainText(`${field.label} ${reason}; it is kept unchanged.`, NOTE_LENGTH) }],
  };
}

/**
 * The bytes a field takes at least, whatever its value: its empty input, or the note that replaces
 * an input whose value does not fit. Budgets are built on this.
 */
export function minimumFieldBytes(field: FormField): number {
  const bare = renderField({ field, presences: ['fresh'] });
  const kept = renderKeptField({ field, reason: LONGEST_KEPT_REASON });
  return Math.max(byteLength(bare), byteLength(kept));
}

export function byteLength(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '');
}
