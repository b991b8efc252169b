import { createHash } from 'node:crypto';
import type { FormField } from './form-field.js';

/** 96 bits of SHA-256: enough that two different layouts never share a key by chance. */
const LAYOUT_KEY_LENGTH = 16;
const LAYOUT_KEY_PATTERN = /^[A-Za-z0-9_-]{16}$/;
/** Not in a call form's metadata (ids, version and channel are `[A-Za-z0-9_:-]`). */
const LAYOUT_SEPARATOR = '#';

/**
 * A short key for which input reads into which property: each field's block id, path and control
 * (with its options and rules), and whether it may be empty. Labels and hints are left out, since
 * a reworded description does not move a value. Block ids are positional (`f:0`, `f:1`), so a
 * form rebuilt from a schema whose properties moved has another key, and its submit must not be
 * read with it.
 */
export function formLayoutKey(fields: readonly FormField[]): string {
  const layout = fields.map(({ blockId, path, control, required, nullable, insideOptionalObject }) => [blockId, path, control, required, nullable, insideOptionalObject]);
  return createHash('sha256').update(JSON.stringify(layout)).digest('base64url').slice(0, LAYOUT_KEY_LENGTH);
}

/** The form's `private_metadata` with the key of the layout it was opened with appended. */
export function withFormLayout({ privateMetadata, layoutKey }: { privateMetadata: string; layoutKey: string }): string {
  if (!LAYOUT_KEY_PATTERN.test(layoutKey)) throw new RangeError('layoutKey must come from formLayoutKey');
  return `${privateMetadata}${LAYOUT_SEPARATOR}${layoutKey}`;
}

/**
 * Splits what `withFormLayout` joined. Metadata without a key (a form opened before keys were
 * added, or a forged one) has `layoutKey` undefined, and no layout can be trusted to match it.
 */
export function readFormLayout(value: unknown): { privateMetadata: unknown; layoutKey?: string } {
  if (typeof value !== 'string') return { privateMetadata: value };
  const cut = value.lastIndexOf(LAYOUT_SEPARATOR);
  const layoutKey = cut >= 0 ? value.slice(cut + 1) : '';
  if (!LAYOUT_KEY_PATTERN.test(layoutKey)) return { privateMetadata: value };
  return { privateMetadata: value.slice(0, cut), layoutKey };
}
