import type { types } from '@slack/bolt';
import { revealInvisible } from '../format/reveal-invisible.js';
import { plainText } from './field-labels.js';
import { valueAt } from './field-presence.js';
import { isGroup, type FormField } from './form-field.js';
import { isRecord } from './json-schema.js';

const NOTICE_LENGTH = 300;

/**
 * Keys of the original value that the schema does not list have no input. Where the schema allows
 * them they are kept as they were; where it forbids them (`additionalProperties: false`, as the AI
 * SDK emits for zod) they are dropped. Either way the approver is told, in one note.
 */
export function extraPropertiesNotice({ fields, initialValue, blockId }: { fields: readonly FormField[]; initialValue: unknown; blockId: string }): types.KnownBlock | undefined {
  const kept: string[] = [];
  const dropped: string[] = [];
  for (const field of fields) {
    if (!isGroup(field)) continue;
    const original = valueAt(initialValue, field.path)?.value;
    if (!isRecord(original)) continue;
    const known = new Set(field.control.propertyNames);
    for (const name of Object.keys(original)) {
      if (known.has(name)) continue;
      // The model wrote these keys: a bidi override in one must not reorder the note.
      (field.control.extraProperties === 'allowed' ? kept : dropped).push(revealInvisible([...field.path, name].join('.')));
    }
  }
  const lines = [
    ...(kept.length > 0 ? [`Not in the form, kept unchanged: ${kept.join(', ')}`] : []),
    ...(dropped.length > 0 ? [`Not allowed by the schema, removed on submit: ${dropped.join(', ')}`] : []),
  ];
  if (lines.length === 0) return undefined;
  return { type: 'context', block_id: blockId, elements: lines.map((line) => ({ type: 'plain_text' as const, text: plainText(line, NOTICE_LENGTH) })) };
}
