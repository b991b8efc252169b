/**
 * Attached to the result of a call that ran with a human's version of its input, so the model
 * learns that its own call (which stays in the history as it made it) is not what ran, and how.
 */
export interface EditNote {
  /** The version that ran; 0 is the model's own input. */
  version: number;
  editedBy: string[];
  /** What differs from the model's input, one line per field. */
  changes: string[];
  ranWithInput: unknown;
  note: string;
}

/** The note as text, for a result that is an error message rather than JSON (an edited call that threw). */
export function editNoteText(edit: EditNote): string {
  return `${edit.note} Changes: ${edit.changes.join('; ')}. ranWithInput: ${JSON.stringify(edit.ranWithInput)}`;
}

/**
 * The note for an edited call answered "not run": `note` says it ran, which it did not. The model
 * must still learn that the call refused was a human's version, not its own call (which stays in the
 * history as it made it), or it reads the refusal as about its own arguments and sends them again.
 */
export function notRunEditNoteText(edit: EditNote): string {
  const editors = edit.editedBy.length > 0 ? edit.editedBy.join(' and ') : 'An approver';
  return `${editors} changed this call's arguments before it was approved: what did not run is ranWithInput, not the arguments in your call; the changes are listed. Do not re-issue your original call unless the user asks. Changes: ${edit.changes.join('; ')}. ranWithInput: ${JSON.stringify(edit.ranWithInput)}`;
}
