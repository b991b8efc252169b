/**
 * What a card or Home says under input it had to cut, so nobody approves thinking they saw it all.
 * The approval card has its own copy of this wording; the two read the same.
 */
export function truncationNote(omittedCharacters: number): string {
  return `\n_(truncated, ${omittedCharacters.toLocaleString('en-US')} more characters)_`;
}
