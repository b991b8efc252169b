import type { ThreadMessenger } from './thread-messenger.js';

/**
 * What the thread shows of an answer the provider's content filter stopped as it was written
 * (`TurnOutcome.filtered`): the text stands as the model's answer (it is in the history too), with
 * a plain note under it, so nobody reads the last sentence as where the model meant to stop. No
 * warning and no Try again: nothing failed, and asking again would meet the same filter.
 */
export function withFilteredNote(options: { text: string; messenger: Pick<ThreadMessenger, 'withOpenCodeClosed'> }): string {
  // The filter may have stopped it inside a code block: closed first, or the note would show as code.
  const text = options.messenger.withOpenCodeClosed({ markdown: options.text });
  return `${text}\n\n_The model's content filter ended this answer here._`;
}
