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
