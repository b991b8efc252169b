import { truncateText } from '../blocks/limits.js';

/** Slack allows 2,000; a label longer than a line stops reading as a label. */
export const LABEL_LENGTH = 150;
/** Slack allows 2,000 per hint; a hundred inputs with long hints would crowd the 250 kB view. */
export const HINT_LENGTH = 300;
const DESCRIPTION_LENGTH = 240;
const DEFAULT_LENGTH = 50;

/** `max_replicas`, `maxReplicas` and `max-replicas` all read "Max replicas"; acronyms keep their case. */
export function humanizeName(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[\s_\-.]+/)
    .filter((word) => word !== '');
  if (words.length === 0) return name.trim() === '' ? '(unnamed)' : name.trim();
  const sentence = words.map((word, index) => (word === word.toUpperCase() || index === 0 ? word : word.toLowerCase())).join(' ');
  return sentence.charAt(0).toUpperCase() + sentence.slice(1);
}

/**
 * Top-level properties read as words ("Max replicas"); nested ones keep their dotted path
 * (`resources.limits.cpu`) so an approver can match them to the card. A `title` wins either way.
 */
export function fieldLabel({ path, title, fallback = 'Value' }: { path: readonly string[]; title?: string; fallback?: string }): string {
  const name = path.at(-1);
  const label = title ?? (name === undefined ? fallback : path.length === 1 ? humanizeName(name) : path.join('.'));
  return plainText(label, LABEL_LENGTH);
}

/** Description first, then the default; both cut so the hint stays short. */
export function fieldHint({ description, defaultValue }: { description?: string; defaultValue?: { value: unknown } }): string | undefined {
  const parts: string[] = [];
  if (description !== undefined) parts.push(truncateText(description.trim(), DESCRIPTION_LENGTH));
  if (defaultValue !== undefined) parts.push(`Default: ${truncateText(compactJson(defaultValue.value), DEFAULT_LENGTH)}`);
  const hint = parts.filter((part) => part !== '').join(' · ');
  return hint === '' ? undefined : plainText(hint, HINT_LENGTH);
}

/** Slack rejects empty or blank text objects, so blank text gets a visible stand-in. */
export function plainText(text: string, maxLength: number): string {
  const trimmed = text.trim();
  return truncateText(trimmed === '' ? '(unnamed)' : trimmed, maxLength);
}

function compactJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
