import { type Elisions, MAX_DEPTH, MAX_VALUES } from './format-arguments.js';

/**
 * What a card, Home, a form or the full-input modal says above input whose display left parts out
 * (`displayArguments`), or undefined when nothing was. The tool receives those parts, and a
 * prompt-injected model can put what matters there, so the approver is told plainly, outside the
 * JSON. Approving stays possible: a legitimate input can be that large.
 */
export function elisionNote(elided: Elisions): string | undefined {
  const parts: string[] = [];
  if (elided.tooDeep > 0) parts.push(`${countParts(elided.tooDeep)} nested deeper than ${MAX_DEPTH} levels`);
  if (elided.pastLimit > 0) parts.push(`${countParts(elided.pastLimit)} past the first ${MAX_VALUES.toLocaleString('en-US')} objects and lists`);
  if (parts.length === 0) return undefined;
  return `:warning: *Parts of this input cannot be shown* (marked ‹not shown›, with all they hold): ${parts.join(', ')}. The tool receives them. Deny unless you trust the source.`;
}

/** "1 part", "12 parts": an elided object or list, whatever it holds. */
function countParts(amount: number): string {
  return `${amount.toLocaleString('en-US')} ${amount === 1 ? 'part' : 'parts'}`;
}
